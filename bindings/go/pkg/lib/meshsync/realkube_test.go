package meshsync_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/meshery/meshkit/broker/channel"

	libmeshsync "meshsync/bindings/go/pkg/lib/meshsync"
)

// realkube is a meshsync-realkube started for one test: a real kube-apiserver with etcd and
// its controllers (doc/realkube.md), reached with the admin's bearer token.
type realkube struct {
	url        string
	token      string
	kubeconfig []byte
}

func realkubePath(t testing.TB) string {
	if path := os.Getenv("MESHSYNC_REALKUBE"); path != "" {
		return path
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, ".cache", "meshsync", "realkube", "meshsync-realkube")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("meshsync-realkube not found: build it with scripts/realkube build, or set MESHSYNC_REALKUBE (%v)", err)
	}
	return path
}

func startRealkube(t testing.TB) *realkube {
	t.Helper()
	dir := t.TempDir()
	config := filepath.Join(dir, "kubeconfig")
	k := &realkube{token: "embedded-test-token"}
	args := []string{"--port", "0", "--data-dir", filepath.Join(dir, "data"),
		"--write-kubeconfig", config, "--token", k.token}
	// the URL is printed once /readyz is ok and the kubeconfig is written
	k.url = startServer(t, dir, "realkube", realkubePath(t), args, func(cmd *exec.Cmd) {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	var err error
	if k.kubeconfig, err = os.ReadFile(config); err != nil {
		t.Fatal(err)
	}
	return k
}

// call sends one API request as the admin; @into, if given, takes the JSON answer.
func (k *realkube) call(t testing.TB, method, path string, body interface{}, into interface{}) {
	t.Helper()
	var reader *bytes.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		reader = bytes.NewReader(data)
	} else {
		reader = bytes.NewReader(nil)
	}
	req, err := http.NewRequest(method, k.url+path, reader)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+k.token)
	switch method {
	case "PATCH":
		req.Header.Set("Content-Type", "application/merge-patch+json")
	default:
		req.Header.Set("Content-Type", "application/json")
	}
	sendJSON(t, req, into)
}

// pods is the truth: every pod's uid and resourceVersion as the API server lists them.
func (k *realkube) pods(t testing.TB) map[string]string {
	t.Helper()
	var list struct {
		Items []struct {
			Metadata struct{ UID, ResourceVersion string }
		}
	}
	k.call(t, "GET", "/api/v1/pods", nil, &list)
	truth := map[string]string{}
	for _, item := range list.Items {
		truth[item.Metadata.UID] = item.Metadata.ResourceVersion
	}
	return truth
}

func realPod(name string) map[string]interface{} {
	return map[string]interface{}{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]interface{}{"name": name, "labels": map[string]string{"app": "web"}},
		"spec": map[string]interface{}{"containers": []interface{}{
			map[string]interface{}{"name": "app", "image": "busybox:1.36"}}},
	}
}

// The package against a real kube-apiserver, as Meshery Server runs it (the channel broker,
// a consumer like Server's): every pod arrives once, and after creates, label changes and
// deletes made while it runs, the consumer's picture equals the server's, resourceVersions
// included. Log and exec sessions need a kubelet, which this server has not (kubesim
// serves them: TestLogAndExecSessionsThroughChannelBroker).
func TestRealAPIServer(t *testing.T) {
	k := startRealkube(t)
	const ns = "/api/v1/namespaces/embedded"
	k.call(t, "POST", "/api/v1/namespaces", map[string]interface{}{"apiVersion": "v1",
		"kind": "Namespace", "metadata": map[string]string{"name": "embedded"}}, nil)
	for i := 0; i < 150; i++ {
		k.call(t, "POST", ns+"/pods", realPod(fmt.Sprintf("web-%d", i)), nil)
	}
	br := channel.NewChannelBrokerHandler()
	consumer := newServerConsumer(t, br, 2000)
	done, cancel := runInBackground(t,
		libmeshsync.WithOutputMode("broker"),
		libmeshsync.WithBrokerHandler(br),
		libmeshsync.WithKubeConfig(k.kubeconfig),
		libmeshsync.WithOnlyK8sResources([]string{"pod"}),
	)
	sameAsServer := func(stage string) {
		t.Helper()
		truth := k.pods(t)
		want := map[string]bool{}
		for uid := range truth {
			want[uid] = true
		}
		consumer.until(t, want, done)
		// the picture holds every uid: now each must be at the server's version
		deadline := time.Now().Add(testTimeout)
		for {
			stale := 0
			for uid, version := range truth {
				if consumer.latest[uid].KubernetesResourceMeta.ResourceVersion != version {
					stale++
				}
			}
			if stale == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d pods behind the server", stage, stale)
			}
			select {
			case msg := <-consumer.ch:
				consumer.take(t, msg)
			case err := <-done:
				t.Fatalf("Run ended: %v", err)
			case <-time.After(time.Second):
			}
		}
	}
	sameAsServer("initial sync")

	for i := 0; i < 50; i++ {
		k.call(t, "DELETE", fmt.Sprintf("%s/pods/web-%d", ns, i), nil, nil)
		k.call(t, "PATCH", fmt.Sprintf("%s/pods/web-%d", ns, 50+i),
			map[string]interface{}{"metadata": map[string]interface{}{
				"labels": map[string]string{"round": "2"}}}, nil)
		k.call(t, "POST", ns+"/pods", realPod(fmt.Sprintf("late-%d", i)), nil)
	}
	sameAsServer("after the changes")

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
	for uid, n := range consumer.added {
		if n != 1 {
			t.Errorf("%s added %d times", uid, n)
		}
	}
}
