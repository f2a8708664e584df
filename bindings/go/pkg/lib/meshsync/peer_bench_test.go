package meshsync_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/meshery/meshkit/broker"
	"github.com/meshery/meshkit/broker/channel"
	"meshsync.invalid/bench/upstream-hot-path/peer"

	libmeshsync "meshsync/bindings/go/pkg/lib/meshsync"
	"meshsync/bindings/go/pkg/model"
)

// decode reads an event as Server's consumer does: the Object through JSON into the model.
func decode(b *testing.B, msg *broker.Message) {
	raw, err := json.Marshal(msg.Object)
	if err != nil {
		b.Fatal(err)
	}
	var obj model.KubernetesResource
	if err := json.Unmarshal(raw, &obj); err != nil {
		b.Fatal(err)
	}
}

// The same initial sync done the way upstream's library does it in Server's process, as far
// as it can be rebuilt here (its module is not served by the module proxy): each pod as a
// watch line through bench/upstream-hot-path's rebuild of client-go's decoding, the
// informer, upstream's handlers and ParseList, and the KubernetesResource value published to
// meshkit's channel broker, read by the same Server-like consumer as
// BenchmarkInitialSync20000. The peer is given the pods already read off the server, so
// the HTTP list is not in its figure; the engine's figure has it.
//
//	go test -run '^$' -bench 'InitialSync20000' -benchtime 3x ./pkg/lib/meshsync/
func BenchmarkUpstreamPeerInitialSync20000(b *testing.B) {
	sim := startKubesim(b, 20000, 20)
	truth := sim.podUIDs(b)
	frames := sim.podWatchLines(b)
	b.ResetTimer()
	var wall, cpu time.Duration
	for i := 0; i < b.N; i++ {
		br := channel.NewChannelBrokerHandler()
		consumer := newServerConsumer(b, br, 2000)
		done := make(chan error, 1)
		startWall, startCPU := time.Now(), cpuTime(b)
		go func() {
			done <- replayThroughPeer(br, frames)
		}()
		// the replay ends before the consumer has read everything: it is waited for after
		consumer.until(b, truth, nil)
		wall += time.Since(startWall)
		cpu += cpuTime(b) - startCPU
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	events := float64(b.N * len(truth))
	b.ReportMetric(events/wall.Seconds(), "events/s")
	b.ReportMetric(float64(cpu.Microseconds())/events, "cpu-µs/event")
}

// replayThroughPeer hands every frame to a fresh peer that publishes each converted pod to
// @br as upstream's library does (a meshkit Message whose Object is the model value),
// trying a refused publish again as the engine's package does, so both lose nothing.
func replayThroughPeer(br broker.Handler, frames [][]byte) error {
	p := peer.New("00000000-0000-4000-8000-000000000000")
	p.Deliver = func(event string, res *peer.KubernetesResource) {
		msg := &broker.Message{ObjectType: broker.MeshSync, EventType: broker.EventType(event),
			Object: *res}
		for br.Publish(libmeshsync.Subject, msg) != nil {
		}
	}
	for _, frame := range frames {
		p.Line(frame)
	}
	return nil
}

// BenchmarkSteadyState is churn after the initial sync: pods modified, created and deleted
// by the simulator at 2,000 a second, through the channel broker to the Server-like
// consumer; CPU of this process per event received, over 20,000 events.
//
//	go test -run '^$' -bench 'SteadyState' -benchtime 1x ./pkg/lib/meshsync/
func BenchmarkSteadyState(b *testing.B) {
	const events = 20000
	sim := startKubesim(b, 20000, 20, "--churn", "2000", "--seed", "3")
	b.ResetTimer()
	var wall, cpu time.Duration
	for i := 0; i < b.N; i++ {
		br := channel.NewChannelBrokerHandler()
		ch := make(chan *broker.Message, 2000)
		if err := br.SubscribeWithChannel(libmeshsync.Subject, "", ch); err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		ready := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- libmeshsync.Run(nil, libmeshsync.WithBrokerHandler(br),
				libmeshsync.WithKubeConfig(sim.kubeconfig), libmeshsync.WithContext(ctx),
				libmeshsync.WithOnlyK8sResources([]string{"pod"}),
				libmeshsync.WithReady(func() { close(ready) }))
		}()
		// the initial sync is not measured: read until the run is ready and its events
		// are through, then count
		for waiting := true; waiting; {
			select {
			case msg := <-ch:
				decode(b, msg)
			case <-ready:
				waiting = false
			case err := <-done:
				b.Fatalf("Run ended: %v", err)
			}
		}
		// Initial events may still wait in the package's queue (4,096 at most) and the
		// channel (2,000): more than those go by before the count starts.
		for n := 0; n < 10000; n++ {
			select {
			case msg := <-ch:
				decode(b, msg)
			case err := <-done:
				b.Fatalf("Run ended: %v", err)
			}
		}
		startWall, startCPU := time.Now(), cpuTime(b)
		for n := 0; n < events; n++ {
			select {
			case msg := <-ch:
				decode(b, msg)
			case err := <-done:
				b.Fatalf("Run ended: %v", err)
			}
		}
		wall += time.Since(startWall)
		cpu += cpuTime(b) - startCPU
		cancel()
		for len(ch) > 0 {
			<-ch
		}
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	total := float64(b.N * events)
	b.ReportMetric(total/wall.Seconds(), "events/s")
	b.ReportMetric(float64(cpu.Microseconds())/total, "cpu-µs/event")
}

// BenchmarkUpstreamPeerSteadyState is BenchmarkSteadyState done by the rebuild of
// upstream's per-event work: 20,000 watch lines of the same churn, recorded from the
// simulator beforehand, through the peer (its informer holding the listed pods, as after an
// initial sync) to the channel broker and the same consumer.
func BenchmarkUpstreamPeerSteadyState(b *testing.B) {
	const events = 20000
	sim := startKubesim(b, 20000, 20, "--churn", "2000", "--seed", "3")
	initial := sim.podWatchLines(b)
	churn := sim.recordWatchLines(b, "/api/v1/pods", events)
	b.ResetTimer()
	var wall, cpu time.Duration
	received := 0
	for i := 0; i < b.N; i++ {
		br := channel.NewChannelBrokerHandler()
		ch := make(chan *broker.Message, 2000)
		if err := br.SubscribeWithChannel(libmeshsync.Subject, "", ch); err != nil {
			b.Fatal(err)
		}
		p := peer.New("00000000-0000-4000-8000-000000000000")
		for _, frame := range initial {
			p.Line(frame) // the informer's cache after the initial sync, not published
		}
		published := make(chan int64, 1)
		b.StartTimer()
		startWall, startCPU := time.Now(), cpuTime(b)
		go func() {
			p.Deliver = func(event string, res *peer.KubernetesResource) {
				msg := &broker.Message{ObjectType: broker.MeshSync,
					EventType: broker.EventType(event), Object: *res}
				for br.Publish(libmeshsync.Subject, msg) != nil {
				}
			}
			p.Published = 0
			for _, frame := range churn {
				p.Line(frame)
			}
			published <- p.Published
		}()
		want, got := int64(-1), int64(0)
		for want < 0 || got < want {
			select {
			case msg := <-ch:
				decode(b, msg)
				got++
			case want = <-published:
			}
		}
		wall += time.Since(startWall)
		cpu += cpuTime(b) - startCPU
		received += int(got)
		b.StopTimer()
	}
	b.ReportMetric(float64(received)/wall.Seconds(), "events/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(received), "cpu-µs/event")
}
