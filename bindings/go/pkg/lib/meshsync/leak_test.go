package meshsync_test

import (
	"context"
	"os"
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
		ctx, cancel := context.WithCancel(context.Background())
		ready := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- libmeshsync.Run(testLogger(t),
				libmeshsync.WithBrokerHandler(br),
				libmeshsync.WithKubeConfig(sim.kubeconfig),
				libmeshsync.WithContext(ctx),
				libmeshsync.WithOnlyK8sResources([]string{"pod"}),
				libmeshsync.WithReady(func() { close(ready) }),
			)
		}()
		select {
		case <-ready:
		case err := <-done:
			t.Fatalf("Run ended before its initial sync: %v", err)
		}
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
	const cycles = 50
	for i := 0; i < cycles; i++ {
		cycle()
	}
	goleak.VerifyNone(t, ignore)
	afterThreads := countDir(t, "/proc/self/task")
	afterFds := countDir(t, "/proc/self/fd")
	t.Logf("after %d cycles: threads %d -> %d, fds %d -> %d", cycles, threads, afterThreads,
		fds, afterFds)
	if afterFds > fds {
		t.Errorf("file descriptors %d -> %d after %d runs", fds, afterFds, cycles)
	}
	// Go itself may start a thread or two for its scheduler; a run leaving its own behind
	// would show as one per cycle
	if afterThreads > threads+2 {
		t.Errorf("threads %d -> %d after %d runs", threads, afterThreads, cycles)
	}
}
