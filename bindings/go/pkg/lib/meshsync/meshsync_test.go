package meshsync_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshery/meshkit/broker"
	"github.com/meshery/meshkit/broker/channel"
	"github.com/meshery/meshkit/logger"

	// The one line Meshery Server changes: upstream's import path for this one.
	libmeshsync "meshsync/bindings/go/pkg/lib/meshsync"
	"meshsync/bindings/go/pkg/model"
)

const testTimeout = 60 * time.Second

func testLogger(t *testing.T) logger.Handler {
	t.Helper()
	log, err := logger.New("meshsync-test", logger.Options{Output: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	return log
}

// serverConsumer reads the core subject as Meshery Server's MeshsyncDataHandler does: an
// empty queue group, the Object turned into a KubernetesResource through JSON whatever Go
// value it is, ADDED and MODIFIED as upserts, DELETED as deletes.
type serverConsumer struct {
	ch     chan *broker.Message
	added  map[string]int
	latest map[string]model.KubernetesResource
}

func newServerConsumer(t testing.TB, br broker.Handler, buffer int) *serverConsumer {
	t.Helper()
	c := &serverConsumer{ch: make(chan *broker.Message, buffer), added: map[string]int{},
		latest: map[string]model.KubernetesResource{}}
	if err := br.SubscribeWithChannel(libmeshsync.Subject, "", c.ch); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *serverConsumer) take(t testing.TB, msg *broker.Message) {
	t.Helper()
	if msg.ObjectType != broker.MeshSync {
		t.Fatalf("ObjectType %q, want %q", msg.ObjectType, broker.MeshSync)
	}
	raw, err := json.Marshal(msg.Object)
	if err != nil {
		t.Fatal(err)
	}
	var obj model.KubernetesResource
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatalf("Object does not decode as a KubernetesResource: %v", err)
	}
	uid := obj.KubernetesResourceMeta.UID
	switch msg.EventType {
	case broker.Add:
		c.added[uid]++
		c.latest[uid] = obj
	case broker.Update:
		c.latest[uid] = obj
	case broker.Delete:
		delete(c.latest, uid)
	default:
		t.Fatalf("EventType %q", msg.EventType)
	}
}

// until takes messages until every uid of want is held, or the run ends.
func (c *serverConsumer) until(t testing.TB, want map[string]bool, runDone <-chan error) {
	t.Helper()
	deadline := time.NewTimer(testTimeout)
	defer deadline.Stop()
	for !c.holds(want) {
		select {
		case msg := <-c.ch:
			c.take(t, msg)
		case err := <-runDone:
			t.Fatalf("Run ended before the sync was complete: %v", err)
		case <-deadline.C:
			t.Fatalf("%d of %d objects after %s", len(c.latest), len(want), testTimeout)
		}
	}
}

func (c *serverConsumer) holds(want map[string]bool) bool {
	if len(c.latest) != len(want) {
		return false
	}
	for uid := range want {
		if _, ok := c.latest[uid]; !ok {
			return false
		}
	}
	return true
}

func TestBrokerModeChannelBroker(t *testing.T) {
	sim := startKubesim(t, 300, 3)
	truth := sim.podUIDs(t)
	br := channel.NewChannelBrokerHandler()
	consumer := newServerConsumer(t, br, 2000) // Server's buffer

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- libmeshsync.Run(testLogger(t),
			libmeshsync.WithOutputMode("broker"),
			libmeshsync.WithBrokerHandler(br),
			libmeshsync.WithKubeConfig(sim.kubeconfig),
			libmeshsync.WithContext(ctx),
			libmeshsync.WithOnlyK8sResources([]string{"pod"}),
			libmeshsync.WithVersion("test"),
			libmeshsync.WithPingEndpoint(":8222/connz"),
			libmeshsync.WithMeshkitConfigProvider("in-mem"),
		)
	}()
	consumer.until(t, truth, done)

	// meshsync-meta, as Server asks it: subscribe to the reply subject, then request
	meta := make(chan *broker.Message, 1)
	if err := br.SubscribeWithChannel("meshsync-meta", "", meta); err != nil {
		t.Fatal(err)
	}
	request := &broker.Message{ObjectType: broker.Request, EventType: broker.Add,
		Request: &broker.RequestObject{Entity: "meshsync-meta"}}
	if err := br.Publish(libmeshsync.RequestSubject, request); err != nil {
		t.Fatal(err)
	}
	select {
	case reply := <-meta:
		if version, ok := reply.Object.(string); !ok || version != "test" {
			t.Errorf("meshsync-meta replied %#v", reply.Object)
		}
	case err := <-done:
		t.Fatalf("Run ended: %v", err)
	}

	// informer-store, as Server asks it: every object held, in batches of at most five
	store := make(chan *broker.Message, 2000)
	if err := br.SubscribeWithChannel("meshery-server.meshsync.store", "", store); err != nil {
		t.Fatal(err)
	}
	request = &broker.Message{Request: &broker.RequestObject{Entity: "informer-store",
		Payload: map[string]string{"Reply": "meshery-server.meshsync.store"}}}
	if err := br.Publish(libmeshsync.RequestSubject, request); err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	for len(stored) < len(truth) {
		select {
		case reply := <-store:
			raw, err := json.Marshal(reply.Object)
			if err != nil {
				t.Fatal(err)
			}
			var batch []model.KubernetesResource
			if err := json.Unmarshal(raw, &batch); err != nil {
				t.Fatalf("a store reply that is not an array of objects: %v", err)
			}
			if len(batch) < 1 || len(batch) > 5 {
				t.Fatalf("a store reply of %d objects", len(batch))
			}
			for _, obj := range batch {
				uid := obj.KubernetesResourceMeta.UID
				if !truth[uid] || stored[uid] {
					t.Fatalf("store reply: %s unknown or twice", uid)
				}
				stored[uid] = true
			}
		case err := <-done:
			t.Fatalf("Run ended: %v", err)
		}
	}

	cancelled := time.Now()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
	took := time.Since(cancelled)
	t.Logf("Run returned %s after the cancel", took)
	if took > time.Second {
		t.Errorf("Run returned %s after the cancel, more than a second", took)
	}
	// whatever the run published is in the channel now: nothing came twice
	for len(consumer.ch) > 0 {
		consumer.take(t, <-consumer.ch)
	}
	for uid, n := range consumer.added {
		if n != 1 {
			t.Errorf("%s added %d times", uid, n)
		}
	}
	if !consumer.holds(truth) {
		t.Errorf("final picture: %d objects, want the %d listed", len(consumer.latest), len(truth))
	}
	for _, obj := range consumer.latest {
		if obj.Kind != "Pod" || obj.APIVersion != "v1" || obj.ClusterID == "" {
			t.Fatalf("object %+v", obj)
		}
		break
	}
}

func TestFileMode(t *testing.T) {
	sim := startKubesim(t, 20, 2)
	truth := sim.podUIDs(t)
	path := filepath.Join(t.TempDir(), "snapshot.yaml")
	ready := make(chan struct{})
	done, cancel := runInBackground(t,
		libmeshsync.WithOutputMode("file"),
		libmeshsync.WithOutputFileName(path),
		libmeshsync.WithKubeConfig(sim.kubeconfig),
		libmeshsync.WithOnlyK8sResources([]string{"pod"}),
		libmeshsync.WithReady(func() { close(ready) }),
	)
	// ready: the initial state is handed to the writer; the snapshot is complete when the
	// run has stopped (the writer's buffer is written at its close)
	await(t, ready, done, "the initial sync")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(text), "---\n"); n != len(truth) {
		t.Errorf("%d documents, want %d", n, len(truth))
	}
	for uid := range truth {
		if strings.Count(string(text), "uid: "+uid+"\n") != 1 {
			t.Errorf("pod %s is not in the snapshot once", uid)
		}
	}
}

func TestStopAfterDurationEndsRun(t *testing.T) {
	sim := startKubesim(t, 5, 1)
	br := channel.NewChannelBrokerHandler()
	err := libmeshsync.Run(testLogger(t),
		libmeshsync.WithBrokerHandler(br),
		libmeshsync.WithKubeConfig(sim.kubeconfig),
		libmeshsync.WithStopAfterDuration(200*time.Millisecond),
	)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestErrors(t *testing.T) {
	log := testLogger(t)
	if err := libmeshsync.Run(log, libmeshsync.WithOutputMode("nats")); err == nil {
		t.Error("an unknown output mode was accepted")
	}
	if err := libmeshsync.Run(log, libmeshsync.WithKubeConfig([]byte("not: [a kubeconfig")),
		libmeshsync.WithBrokerHandler(channel.NewChannelBrokerHandler())); err == nil {
		t.Error("an unusable kubeconfig was accepted")
	}
	t.Setenv("BROKER_URL", "")
	if err := libmeshsync.Run(log, libmeshsync.WithKubeConfig([]byte("{}"))); err == nil ||
		!strings.Contains(err.Error(), "BROKER_URL") {
		t.Errorf("broker mode without a handler or BROKER_URL: %v", err)
	}
}

// Without WithVersion, meshsync-meta names the engine's build (release and commit), never
// upstream's "Not Set".
func TestMetaWithoutVersionNamesTheBuild(t *testing.T) {
	sim := startKubesim(t, 3, 1)
	br := channel.NewChannelBrokerHandler()
	meta := make(chan *broker.Message, 1)
	if err := br.SubscribeWithChannel("meshsync-meta", "", meta); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- libmeshsync.Run(testLogger(t), libmeshsync.WithBrokerHandler(br),
			libmeshsync.WithKubeConfig(sim.kubeconfig), libmeshsync.WithContext(ctx),
			libmeshsync.WithOnlyK8sResources([]string{"pod"}),
			libmeshsync.WithReady(func() { close(ready) }))
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("Run ended: %v", err)
	}
	request := &broker.Message{ObjectType: broker.Request, EventType: broker.Add,
		Request: &broker.RequestObject{Entity: "meshsync-meta"}}
	if err := br.Publish(libmeshsync.RequestSubject, request); err != nil {
		t.Fatal(err)
	}
	engine := libmeshsync.EngineVersion()
	if !strings.HasPrefix(engine, "v0.") {
		t.Errorf("EngineVersion() = %q", engine)
	}
	select {
	case reply := <-meta:
		if version, ok := reply.Object.(string); !ok || version != engine {
			t.Errorf("meshsync-meta replied %#v, want %q", reply.Object, engine)
		}
	case err := <-done:
		t.Fatalf("Run ended: %v", err)
	}
}
