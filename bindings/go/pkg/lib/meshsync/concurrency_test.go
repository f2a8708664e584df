// Cases that rely on every timer and idle of the library being attached to its engine's own
// main context (doc/threading.md): an informer paused by a writer that is not writable
// resumes from an idle, a resync waits on a timer, and engines on several threads share no
// state.

package meshsync_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/meshery/meshkit/broker"
	"github.com/meshery/meshkit/broker/channel"

	libmeshsync "meshsync/bindings/go/pkg/lib/meshsync"
	"meshsync/bindings/go/pkg/model"
)

// A consumer that does not read makes the engine hold its events; once it reads, every
// object arrives once, none lost to the channel broker's failed publishes.
func TestBackPressureLosesNothing(t *testing.T) {
	sim := startKubesim(t, 6000, 4)
	truth := sim.podUIDs(t)
	br := channel.NewChannelBrokerHandler(channel.WithSingleChannelBufferSize(16),
		channel.WithPublishToChannelDelay(10*time.Millisecond))
	consumer := newServerConsumer(t, br, 1)

	held := make(chan struct{})
	done, cancel := runInBackground(t,
		libmeshsync.WithBrokerHandler(br),
		libmeshsync.WithKubeConfig(sim.kubeconfig),
		libmeshsync.WithOnlyK8sResources([]string{"pod"}),
		libmeshsync.WithHeld(func() { close(held) }),
	)
	await(t, held, done, "holding")
	consumer.until(t, truth, done)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	for len(consumer.ch) > 0 {
		consumer.take(t, <-consumer.ch)
	}
	for uid, n := range consumer.added {
		if n != 1 {
			t.Errorf("%s added %d times", uid, n)
		}
	}
}

// resync-discovery through the handler: every object is listed again and arrives as ADDED.
func TestResyncThroughHandler(t *testing.T) {
	sim := startKubesim(t, 40, 2)
	truth := sim.podUIDs(t)
	br := channel.NewChannelBrokerHandler()
	consumer := newServerConsumer(t, br, 2000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- libmeshsync.Run(testLogger(t),
			libmeshsync.WithBrokerHandler(br),
			libmeshsync.WithKubeConfig(sim.kubeconfig),
			libmeshsync.WithContext(ctx),
			libmeshsync.WithOnlyK8sResources([]string{"pod"}),
		)
	}()
	consumer.until(t, truth, done)
	request := &broker.Message{ObjectType: broker.Request, EventType: broker.Add,
		Request: &broker.RequestObject{Entity: broker.ReSyncDiscoveryEntity}}
	if err := br.Publish(libmeshsync.RequestSubject, request); err != nil {
		t.Fatal(err)
	}
	again := map[string]bool{}
	for len(again) < len(truth) {
		select {
		case msg := <-consumer.ch:
			consumer.take(t, msg)
			if msg.EventType == broker.Add {
				raw, _ := json.Marshal(msg.Object)
				var obj model.KubernetesResource
				if err := json.Unmarshal(raw, &obj); err != nil {
					t.Fatal(err)
				}
				if consumer.added[obj.KubernetesResourceMeta.UID] == 2 {
					again[obj.KubernetesResourceMeta.UID] = true
				}
			}
		case err := <-done:
			t.Fatalf("Run ended: %v", err)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// Ten runs in one process against ten clusters: each handler gets its own cluster's objects
// and no other's, and every run ends on its cancel.
func TestTenConcurrentRuns(t *testing.T) {
	const runs = 10
	type cluster struct {
		truth    map[string]bool
		consumer *serverConsumer
		done     chan error
	}
	clusters := make([]*cluster, runs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range clusters {
		sim := startKubesim(t, 50, 2)
		br := channel.NewChannelBrokerHandler()
		c := &cluster{truth: sim.podUIDs(t), consumer: newServerConsumer(t, br, 2000),
			done: make(chan error, 1)}
		clusters[i] = c
		go func() {
			c.done <- libmeshsync.Run(testLogger(t),
				libmeshsync.WithBrokerHandler(br),
				libmeshsync.WithKubeConfig(sim.kubeconfig),
				libmeshsync.WithContext(ctx),
				libmeshsync.WithOnlyK8sResources([]string{"pod"}),
			)
		}()
	}
	var wg sync.WaitGroup
	for _, c := range clusters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.consumer.until(t, c.truth, c.done)
		}()
	}
	wg.Wait()
	cancel()
	for _, c := range clusters {
		if err := <-c.done; err != nil {
			t.Errorf("Run: %v", err)
		}
		for len(c.consumer.ch) > 0 {
			c.consumer.take(t, <-c.consumer.ch)
		}
		for uid, n := range c.consumer.added {
			if !c.truth[uid] || n != 1 {
				t.Errorf("%s added %d times, in this cluster: %v", uid, n, c.truth[uid])
			}
		}
	}
}
