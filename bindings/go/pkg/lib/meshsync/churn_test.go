package meshsync_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/meshery/meshkit/broker"
	"github.com/meshery/meshkit/broker/channel"

	libmeshsync "meshsync/bindings/go/pkg/lib/meshsync"
	"meshsync/bindings/go/pkg/model"
)

// held is what a consumer ends on for one object: its last version, and whether that was
// its deletion.
type held struct {
	version uint64
	deleted bool
}

// churnPicture is a Server-like consumer's picture that keeps deletions as tombstones, so
// that it can be judged against a list taken while churn goes on.
type churnPicture struct {
	last  map[string]held
	added map[string]int
}

func (p *churnPicture) take(t *testing.T, msg *broker.Message) {
	t.Helper()
	raw, err := json.Marshal(msg.Object)
	if err != nil {
		t.Fatal(err)
	}
	var obj model.KubernetesResource
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatalf("Object does not decode as a KubernetesResource: %v", err)
	}
	uid := obj.KubernetesResourceMeta.UID
	version := parseVersion(t, obj.KubernetesResourceMeta.ResourceVersion)
	if msg.EventType == broker.Add {
		p.added[uid]++
	}
	p.last[uid] = held{version: version, deleted: msg.EventType == broker.Delete}
}

// behind says what keeps the picture from having caught up with @state, listed at cluster
// version @rv: an object of @state absent, deleted or older in the picture (absent or
// deleted is right when it is gone from @now, a later list: it may have come and gone
// between the two; with no @now it counts as missing), or one held alive that @state lacks though it is no newer than @rv.
func (p *churnPicture) behind(rv uint64, state, now map[string]uint64) []string {
	var diff []string
	for uid, want := range state {
		got, ok := p.last[uid]
		if !ok || got.deleted {
			if _, still := now[uid]; still || now == nil {
				diff = append(diff, "missing "+uid)
			}
		} else if got.version < want {
			diff = append(diff, fmt.Sprintf("stale %s (%d < %d)", uid, got.version, want))
		}
	}
	for uid, got := range p.last {
		if _, ok := state[uid]; !ok && !got.deleted && got.version <= rv {
			diff = append(diff, "extra "+uid)
		}
	}
	return diff
}

// Under churn (pods modified, created and deleted all along), through the channel broker:
// the picture a Server-like consumer builds catches up with the cluster's, and every object
// was added once.
func TestChurnEndsEqualToTheCluster(t *testing.T) {
	sim := startKubesim(t, 300, 3, "--churn", "200", "--seed", "5")
	br := channel.NewChannelBrokerHandler()
	ch := make(chan *broker.Message, 2000)
	if err := br.SubscribeWithChannel(libmeshsync.Subject, "", ch); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- libmeshsync.Run(testLogger(t),
			libmeshsync.WithBrokerHandler(br),
			libmeshsync.WithKubeConfig(sim.kubeconfig),
			libmeshsync.WithContext(ctx),
			libmeshsync.WithOnlyK8sResources([]string{"pod"}),
		)
	}()
	defer func() {
		cancel()
		<-done
	}()

	picture := &churnPicture{last: map[string]held{}, added: map[string]int{}}
	deadline := time.NewTimer(testTimeout)
	defer deadline.Stop()
	// Three fixed points in turn, each taken while churn goes on: the picture gets past
	// every one.
	for round := 0; round < 3; round++ {
		rv, state := sim.podVersions(t)
		for {
			var diff []string
			if diff = picture.behind(rv, state, nil); len(diff) > 0 {
				_, now := sim.podVersions(t)
				diff = picture.behind(rv, state, now)
			}
			if len(diff) == 0 {
				break
			}
			select {
			case msg := <-ch:
				picture.take(t, msg)
				for len(ch) > 0 {
					picture.take(t, <-ch)
				}
			case err := <-done:
				t.Fatalf("Run ended: %v", err)
			case <-deadline.C:
				t.Fatalf("round %d: the picture never caught up with resourceVersion %d: %d differences, first %v",
					round, rv, len(diff), diff[:min(len(diff), 5)])
			}
		}
	}
	for uid, n := range picture.added {
		if n != 1 {
			t.Errorf("%s added %d times", uid, n)
		}
	}
	if len(picture.added) <= 300 {
		t.Errorf("%d objects added: churn created none", len(picture.added))
	}
}
