package meshsync_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	libmeshsync "meshsync/bindings/go/pkg/lib/meshsync"
)

// runInBackground starts Run with @options and the test's logger, under a context of its
// own: it returns Run's result and the cancel of that context, which the test's cleanup
// calls too.
func runInBackground(t *testing.T, options ...libmeshsync.OptionsSetter) (<-chan error, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done := make(chan error, 1)
	options = append(options, libmeshsync.WithContext(ctx))
	go func() { done <- libmeshsync.Run(testLogger(t), options...) }()
	return done, cancel
}

// await waits until @signal is closed (by a WithReady or WithHeld hook), failing the test if
// Run ends first.
func await(t testing.TB, signal <-chan struct{}, done <-chan error, what string) {
	t.Helper()
	select {
	case <-signal:
	case err := <-done:
		t.Fatalf("Run ended before %s: %v", what, err)
	}
}

// startServer starts @binary (kubesim or realkube) with @args, which prints its URL as the
// first line of its standard output once it serves and its kubeconfig is written, so nothing
// is waited for by time; its standard error goes to @dir/@name.log. The test's cleanup ends
// it with @stop.
func startServer(t testing.TB, dir, name, binary string, args []string, stop func(*exec.Cmd)) string {
	t.Helper()
	cmd := exec.Command(binary, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop(cmd)
		_ = log.Close()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "http") {
		data, _ := os.ReadFile(log.Name())
		t.Fatalf("%s did not start: %q %v\n%s", name, line, err, data)
	}
	return strings.TrimSpace(line)
}

// sendJSON sends @req (the simulator's or the API server's certificate trusted as is), fails
// the test unless the answer is 2xx, and decodes it into @into when given.
func sendJSON(t testing.TB, req *http.Request, into interface{}) {
	t.Helper()
	resp, err := insecureClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %s", req.Method, req.URL.Path, resp.Status)
	}
	if into != nil {
		if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
			t.Fatal(err)
		}
	}
}
