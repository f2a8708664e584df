package meshsync_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/meshery/meshkit/broker/channel"
	"github.com/meshery/meshkit/logger"
	"github.com/sirupsen/logrus"

	libmeshsync "meshsync/bindings/go/pkg/lib/meshsync"
)

// lockedBuffer is a logger's output written from the logger goroutines of the package.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// The engine's own lines reach the logger given to Run, each run's to its own: two runs on
// two clusters at once, each logger says its own cluster's initial sync and not the other's.
func TestEngineLinesReachEachRunsLogger(t *testing.T) {
	type cluster struct {
		pods int
		out  *lockedBuffer
	}
	clusters := []*cluster{{pods: 7, out: &lockedBuffer{}}, {pods: 11, out: &lockedBuffer{}}}
	var wg sync.WaitGroup
	for _, c := range clusters {
		sim := startKubesim(t, c.pods, 1)
		log, err := logger.New("meshsync-test", logger.Options{Output: c.out, LogLevel: int(logrus.InfoLevel)})
		if err != nil {
			t.Fatal(err)
		}
		br := channel.NewChannelBrokerHandler()
		consumer := newServerConsumer(t, br, 2000)
		ctx, cancel := context.WithCancel(context.Background())
		ready := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- libmeshsync.Run(log,
				libmeshsync.WithBrokerHandler(br),
				libmeshsync.WithKubeConfig(sim.kubeconfig),
				libmeshsync.WithContext(ctx),
				libmeshsync.WithOnlyK8sResources([]string{"pod"}),
				libmeshsync.WithReady(func() { close(ready) }),
			)
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-ready:
			case err := <-done:
				t.Errorf("Run ended before its initial sync: %v", err)
				return
			}
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
			for len(consumer.ch) > 0 {
				<-consumer.ch
			}
		}()
	}
	wg.Wait()
	for i, c := range clusters {
		own := fmt.Sprintf("initial sync complete: %d objects", c.pods)
		other := fmt.Sprintf("initial sync complete: %d objects", clusters[1-i].pods)
		text := c.out.String()
		if !strings.Contains(text, own) {
			t.Errorf("logger of the %d-pod cluster lacks %q:\n%s", c.pods, own, text)
		}
		if strings.Contains(text, other) {
			t.Errorf("logger of the %d-pod cluster has the other run's %q:\n%s", c.pods, other, text)
		}
	}
}
