package meshsync_test

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/meshery/meshkit/broker/channel"
	"go.uber.org/goleak"

	libmeshsync "meshsync/bindings/go/pkg/lib/meshsync"
)

func countDir(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// Start and cancel, again and again, as Server does when a connection comes and goes: no
// goroutine, thread or file descriptor is left behind by a run.
func TestStartCancelCyclesLeaveNothing(t *testing.T) {
	sim := startKubesim(t, 10, 1)
	br := channel.NewChannelBrokerHandler()
	consumer := newServerConsumer(t, br, 2000)
	cycle := func() {
		ready := make(chan struct{})
		done, cancel := runInBackground(t,
			libmeshsync.WithBrokerHandler(br),
			libmeshsync.WithKubeConfig(sim.kubeconfig),
			libmeshsync.WithOnlyK8sResources([]string{"pod"}),
			libmeshsync.WithReady(func() { close(ready) }),
		)
		await(t, ready, done, "its initial sync")
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		for len(consumer.ch) > 0 {
			<-consumer.ch
		}
	}
	// the first run makes what GLib and libsoup keep for the process (type registrations,
	// worker threads); the later ones must add nothing
	cycle()
	ignore := goleak.IgnoreCurrent()
	threads := countDir(t, "/proc/self/task")
	fds := countDir(t, "/proc/self/fd")
	// RSS is read once the allocators settled. glibc gives each new thread an arena of its
	// own, up to eight per core, and a run is a new thread: with the default, RSS climbs by
	// about 15 MB over the first few dozen runs, at a pace that depends on the machine's
	// load, and only then is flat. go-test runs this with MALLOC_ARENA_MAX=2, which leaves
	// what runs leave behind as the only growth.
	warmup, cycles := 40, 100
	if raceEnabled {
		// no RSS reading under the race detector: fewer cycles find a goroutine, thread
		// or descriptor left behind just as well
		warmup, cycles = 5, 30
	}
	var rss int64
	for i := 0; i < warmup+cycles; i++ {
		cycle()
		if i == warmup-1 {
			rss = residentBytes(t)
		}
	}
	afterRSS := residentBytes(t)
	goleak.VerifyNone(t, ignore)
	afterThreads := countDir(t, "/proc/self/task")
	afterFds := countDir(t, "/proc/self/fd")
	t.Logf("after %d cycles: threads %d -> %d, fds %d -> %d, RSS %d kB -> %d kB", warmup+cycles,
		threads, afterThreads, fds, afterFds, rss/1024, afterRSS/1024)
	// A run that leaves its service behind grows RSS by 23 MB over these cycles; without a
	// leak it moves by under 1 MB. The race detector's own memory grows with every goroutine
	// it saw, so the figure is asserted in the build without it (go-test runs this test both
	// ways), and with the arenas bounded.
	if !raceEnabled && os.Getenv("MALLOC_ARENA_MAX") != "" && afterRSS-rss > rssSlack {
		t.Errorf("RSS grew %d kB over %d runs (more than %d kB)", (afterRSS-rss)/1024, cycles,
			rssSlack/1024)
	}
	if afterFds > fds {
		t.Errorf("file descriptors %d -> %d after %d runs", fds, afterFds, cycles)
	}
	// Go itself may start a thread or two for its scheduler; a run leaving its own behind
	// would show as one per cycle
	if afterThreads > threads+2 {
		t.Errorf("threads %d -> %d after %d runs", threads, afterThreads, cycles)
	}
}

// rssSlack is what RSS may move between two readings with nothing leaked: heap pages the
// allocators did not give back yet.
const rssSlack = 4 << 20

// residentBytes is the process's resident set after a garbage collection that returns what
// it can to the system.
func residentBytes(t *testing.T) int64 {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimPrefix(line, "VmRSS:"), "%d", &kb); err != nil {
				t.Fatal(err)
			}
			return kb * 1024
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}
