package meshsync_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const (
	upstreamImport = `libmeshsync "github.com/meshery/meshsync/pkg/lib/meshsync"`
	ourImport      = `libmeshsync "meshsync/bindings/go/pkg/lib/meshsync"`
)

// A program written against upstream's package (testdata/upstream-program.go.txt) builds
// against this one with its import line swapped and nothing else changed, and runs: every
// pod of the simulator reaches its consumer.
func TestUpstreamProgramSwapsOneImport(t *testing.T) {
	source, err := os.ReadFile(filepath.Join("testdata", "upstream-program.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(source), upstreamImport) != 1 {
		t.Fatalf("the program does not import upstream's package once")
	}
	swapped := strings.Replace(string(source), upstreamImport, ourImport, 1)
	// Inside the module, so that the import resolves as it would in Server's module with a
	// require of this one; testdata keeps it out of ./... patterns.
	dir, err := os.MkdirTemp("testdata", "swapped-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(swapped), 0o644); err != nil {
		t.Fatal(err)
	}
	binary := filepath.Join(t.TempDir(), "server")
	build := exec.Command(goTool(t), "build", "-o", binary, "./"+dir)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the swapped program does not build: %v\n%s", err, out)
	}

	sim := startKubesim(t, 120, 2)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, sim.kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(binary, kubeconfig, "120").CombinedOutput()
	if err != nil {
		t.Fatalf("the swapped program failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "120 objects") {
		t.Fatalf("the swapped program said %q", out)
	}
}

// goTool is the go command running this test (go-test picks one of 1.26 or newer).
func goTool(t *testing.T) string {
	if path := os.Getenv("MESHSYNC_GO"); path != "" {
		return path
	}
	path, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command in PATH (set MESHSYNC_GO): %v", err)
	}
	return path
}
