package meshsync_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/meshery/meshkit/broker/channel"

	libmeshsync "meshsync/bindings/go/pkg/lib/meshsync"
)

func cpuTime(b *testing.B) time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		b.Fatal(err)
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}

// BenchmarkInitialSync20000 is an initial sync of 20,000 pods through meshkit's channel
// broker to a consumer written like Server's: events per second and this process's CPU
// (engine, publisher and consumer; the simulator is another process) per event. Run with
// go test -run '^$' -bench InitialSync -benchtime 3x ./pkg/lib/meshsync/
func BenchmarkInitialSync20000(b *testing.B) {
	sim := startKubesim(b, 20000, 20)
	truth := sim.podUIDs(b)
	b.ResetTimer()
	var wall, cpu time.Duration
	for i := 0; i < b.N; i++ {
		br := channel.NewChannelBrokerHandler()
		consumer := newServerConsumer(b, br, 2000)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		startWall, startCPU := time.Now(), cpuTime(b)
		go func() {
			done <- libmeshsync.Run(nil, libmeshsync.WithBrokerHandler(br),
				libmeshsync.WithKubeConfig(sim.kubeconfig), libmeshsync.WithContext(ctx),
				libmeshsync.WithOnlyK8sResources([]string{"pod"}))
		}()
		consumer.until(b, truth, done)
		wall += time.Since(startWall)
		cpu += cpuTime(b) - startCPU
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	events := float64(b.N * len(truth))
	b.ReportMetric(events/wall.Seconds(), "events/s")
	b.ReportMetric(float64(cpu.Microseconds())/events, "cpu-µs/event")
}
