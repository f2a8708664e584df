package meshsync_test

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// kubesim is a meshsync-kubesim started for one test: HTTPS with a bearer token, its
// kubeconfig written where the test reads it. It prints its URL once it listens and the
// kubeconfig is written, so nothing is waited for by time.
type kubesim struct {
	url        string
	kubeconfig []byte
}

func kubesimPath(t testing.TB) string {
	if path := os.Getenv("MESHSYNC_KUBESIM"); path != "" {
		return path
	}
	path, err := filepath.Abs("../../../../../build/src/tools/kubesim/meshsync-kubesim")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("meshsync-kubesim not found: set MESHSYNC_KUBESIM or build ./build (%v)", err)
	}
	return path
}

func startKubesim(t testing.TB, pods, namespaces int, extra ...string) *kubesim {
	t.Helper()
	dir := t.TempDir()
	config := filepath.Join(dir, "kubeconfig")
	args := append([]string{"--port", "0", "--address", "127.0.0.1",
		"--write-kubeconfig", config, "--tls", "--token", "sim-token",
		"--pods", fmt.Sprint(pods), "--namespaces", fmt.Sprint(namespaces)}, extra...)
	url := startServer(t, dir, "kubesim", kubesimPath(t), args, func(cmd *exec.Cmd) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	data, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	return &kubesim{url: url, kubeconfig: data}
}

// insecureClient trusts the simulator's self-signed certificate as is.
var insecureClient = &http.Client{Transport: &http.Transport{
	TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

// open sends a GET for @path to the simulator (its self-signed certificate trusted as is).
func (k *kubesim) open(t testing.TB, path string, auth bool) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", k.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth {
		req.Header.Set("Authorization", "Bearer sim-token")
	}
	resp, err := insecureClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func (k *kubesim) get(t testing.TB, path string, auth bool, into interface{}) {
	t.Helper()
	resp := k.open(t, path, auth)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		t.Fatal(err)
	}
}

// podUIDs is the truth: every pod's uid as the API server lists it.
func (k *kubesim) podUIDs(t testing.TB) map[string]bool {
	t.Helper()
	var list struct {
		Items []struct {
			Metadata struct {
				UID string `json:"uid"`
			} `json:"metadata"`
		} `json:"items"`
	}
	k.get(t, "/api/v1/pods", true, &list)
	uids := map[string]bool{}
	for _, item := range list.Items {
		uids[item.Metadata.UID] = true
	}
	if len(uids) == 0 {
		t.Fatal("kubesim lists no pods")
	}
	return uids
}

// podVersions is the truth at one instant: the list's resourceVersion and every pod's, read
// in one page so that churn cannot split it.
func (k *kubesim) podVersions(t testing.TB) (uint64, map[string]uint64) {
	t.Helper()
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []struct {
			Metadata struct {
				UID             string `json:"uid"`
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		} `json:"items"`
	}
	k.get(t, "/api/v1/pods", true, &list)
	state := map[string]uint64{}
	for _, item := range list.Items {
		state[item.Metadata.UID] = parseVersion(t, item.Metadata.ResourceVersion)
	}
	return parseVersion(t, list.Metadata.ResourceVersion), state
}

func parseVersion(t testing.TB, text string) uint64 {
	t.Helper()
	var v uint64
	if _, err := fmt.Sscanf(text, "%d", &v); err != nil {
		t.Fatalf("resourceVersion %q: %v", text, err)
	}
	return v
}

// podWatchLines is every pod as the watch line an informer's initial sync stands for
// ({"type":"ADDED","object":...}), read off one list.
func (k *kubesim) podWatchLines(t testing.TB) [][]byte {
	t.Helper()
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	k.get(t, "/api/v1/pods", true, &list)
	lines := make([][]byte, 0, len(list.Items))
	for _, item := range list.Items {
		line, err := json.Marshal(map[string]json.RawMessage{
			"type": json.RawMessage(`"ADDED"`), "object": item})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, line)
	}
	return lines
}

// recordWatchLines reads @n event lines of a watch on @path from the current
// resourceVersion (bookmarks not counted).
func (k *kubesim) recordWatchLines(t testing.TB, path string, n int) [][]byte {
	t.Helper()
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	k.get(t, path+"?limit=1", true, &list)
	resp := k.open(t, path+"?watch=true&resourceVersion="+list.Metadata.ResourceVersion, true)
	defer resp.Body.Close()
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 0, 1<<20), 16<<20)
	lines := make([][]byte, 0, n)
	for len(lines) < n && scanner.Scan() {
		if bytes.Contains(scanner.Bytes()[:min(len(scanner.Bytes()), 32)], []byte("BOOKMARK")) {
			continue
		}
		lines = append(lines, append([]byte(nil), scanner.Bytes()...))
	}
	if len(lines) < n {
		t.Fatalf("watch on %s ended after %d lines: %v", path, len(lines), scanner.Err())
	}
	return lines
}
