package meshsync_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/meshery/meshkit/broker"
	"github.com/meshery/meshkit/broker/channel"

	libmeshsync "meshsync/bindings/go/pkg/lib/meshsync"
	"meshsync/bindings/go/pkg/model"
)

// The longest a test waits for a message or a state before it fails (a bound, not a
// measurement).
const sessionWait = 60 * time.Second

const sessionNamespace = "shop"

// admin calls kubesim's admin endpoint (/kubesim/<action>) and decodes its answer.
func (k *kubesim) admin(t testing.TB, method, action string, body []byte, into interface{}) {
	t.Helper()
	req, err := http.NewRequest(method, k.url+"/kubesim/"+action, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	sendJSON(t, req, into)
}

func (k *kubesim) create(t testing.TB, object map[string]interface{}) {
	t.Helper()
	data, err := json.Marshal(object)
	if err != nil {
		t.Fatal(err)
	}
	k.admin(t, "POST", "objects", data, nil)
}

// waitFor polls @state (kubesim's counters, the broker's subscriptions) until it holds.
func waitFor(t testing.TB, what string, state func() bool) {
	t.Helper()
	deadline := time.Now().Add(sessionWait)
	for !state() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// next takes the next message of @ch, failing the test if the run ends or nothing comes.
func next(t testing.TB, ch <-chan *broker.Message, done <-chan error, what string) *broker.Message {
	t.Helper()
	select {
	case msg := <-ch:
		return msg
	case err := <-done:
		t.Fatalf("Run ended while waiting for %s: %v", what, err)
	case <-time.After(sessionWait):
		t.Fatalf("timed out waiting for %s", what)
	}
	return nil
}

func sessionPod(name string) map[string]interface{} {
	return map[string]interface{}{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]interface{}{"name": name, "namespace": sessionNamespace},
		"spec": map[string]interface{}{"nodeName": "node-1", "containers": []interface{}{
			map[string]interface{}{"name": "app", "image": "busybox:1.36"}}},
		"status": map[string]interface{}{"phase": "Running"},
	}
}

// sessionRequest is a request as Meshery Server sends it for a log stream or a shell.
func sessionRequest(entity broker.RequestEntity, fields map[string]interface{}) *broker.Message {
	return &broker.Message{ObjectType: broker.Request, EventType: broker.Add,
		Request: &broker.RequestObject{Entity: entity,
			Payload: map[string]interface{}{"viewer": fields}}}
}

func subscribed(br *channel.ChannelBrokerHandler, subject string) bool {
	for _, endpoint := range br.ConnectedEndpoints() {
		if strings.HasPrefix(endpoint, subject+"::") {
			return true
		}
	}
	return false
}

// A log stream and an exec shell through meshkit's channel broker, as Meshery Server opens
// them: the requests on meshery.meshsync.request, the log chunks on meshery.meshsync.logs
// as upstream's *model.LogObject, the shell's output on the session's subject and its input
// from input.<session>, the active list as the session ids.
func TestLogAndExecSessionsThroughChannelBroker(t *testing.T) {
	sim := startKubesim(t, 2, 1)
	sim.create(t, map[string]interface{}{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]interface{}{"name": sessionNamespace}})
	sim.create(t, sessionPod("solo"))
	br := channel.NewChannelBrokerHandler()
	logs := make(chan *broker.Message, 256)
	active := make(chan *broker.Message, 16)
	for subject, ch := range map[string]chan *broker.Message{
		"meshery.meshsync.logs": logs, "active_sessions.exec": active} {
		if err := br.SubscribeWithChannel(subject, "", ch); err != nil {
			t.Fatal(err)
		}
	}

	ready := make(chan struct{})
	done, cancel := runInBackground(t,
		libmeshsync.WithOutputMode("broker"),
		libmeshsync.WithBrokerHandler(br),
		libmeshsync.WithKubeConfig(sim.kubeconfig),
		libmeshsync.WithOnlyK8sResources([]string{"pod"}),
		libmeshsync.WithReady(func() { close(ready) }),
	)
	await(t, ready, done, "its initial sync")
	publish := func(subject string, msg *broker.Message) {
		t.Helper()
		if err := br.Publish(subject, msg); err != nil {
			t.Fatal(err)
		}
	}

	// Logs: two lines of history, then a line appended while following, then a stop.
	sim.admin(t, "POST", "logs?namespace=shop&pod=solo&container=app",
		[]byte("history one\nhistory two\nhistory three\n"), nil)
	publish(libmeshsync.RequestSubject, sessionRequest(broker.LogRequestEntity,
		map[string]interface{}{"id": "r1", "name": "solo", "namespace": sessionNamespace,
			"container": "app", "follow": true, "taillines": 2}))
	text := ""
	for strings.Count(text, "\n") < 2 {
		msg := next(t, logs, done, "two lines of history")
		chunk, ok := msg.Object.(*model.LogObject)
		if !ok || msg.ObjectType != broker.LogStreamObject || msg.EventType != broker.Add {
			t.Fatalf("a log message %s/%s with %#v", msg.ObjectType, msg.EventType, msg.Object)
		}
		if chunk.ID != "r1" || chunk.Primary != "solo" || chunk.Secondary != "app" {
			t.Fatalf("a log chunk %+v", chunk)
		}
		text += chunk.Data
	}
	if !strings.Contains(text, "history two") || !strings.Contains(text, "history three") ||
		strings.Contains(text, "history one") {
		t.Fatalf("the last two lines of history, got %q", text)
	}
	followers := func() int {
		var answer struct{ Followers int }
		sim.admin(t, "GET", "logs?namespace=shop&pod=solo&container=app", nil, &answer)
		return answer.Followers
	}
	waitFor(t, "a follower of solo/app", func() bool { return followers() == 1 })
	sim.admin(t, "POST", "logs?namespace=shop&pod=solo&container=app",
		[]byte("appended while following\n"), nil)
	for !strings.Contains(text, "appended while following") {
		text += next(t, logs, done, "the appended line").Object.(*model.LogObject).Data
	}
	publish(libmeshsync.RequestSubject, sessionRequest(broker.LogRequestEntity,
		map[string]interface{}{"id": "r1", "name": "solo", "namespace": sessionNamespace,
			"container": "app", "stop": true}))
	waitFor(t, "no follower of solo/app", func() bool { return followers() == 0 })

	// Exec: the active list names the session, a line typed is echoed and run, exit ends it.
	session := fmt.Sprintf("exec.%s.solo.app.e1", sessionNamespace)
	output := make(chan *broker.Message, 256)
	if err := br.SubscribeWithChannel(session, "", output); err != nil {
		t.Fatal(err)
	}
	publish(libmeshsync.RequestSubject, sessionRequest(broker.ExecRequestEntity,
		map[string]interface{}{"id": "e1", "name": "solo", "namespace": sessionNamespace,
			"container": "app"}))
	list := next(t, active, done, "the active sessions")
	ids, ok := list.Object.([]string)
	if !ok || list.ObjectType != broker.ActiveExecObject {
		t.Fatalf("an active-exec message %s with %#v", list.ObjectType, list.Object)
	}
	found := false
	for _, id := range ids {
		found = found || id == session
	}
	if !found {
		t.Fatalf("the active sessions %v without %s", ids, session)
	}
	waitFor(t, "the shell's input subscription", func() bool {
		return subscribed(br, "input."+session)
	})
	publish("input."+session, &broker.Message{ObjectType: broker.ExecInputObject,
		Object: "echo round-trip-ok"})
	shell := ""
	for strings.Count(shell, "round-trip-ok") < 2 { // the terminal's echo, then the output
		msg := next(t, output, done, "the echo")
		chunk, ok := msg.Object.(string)
		if !ok || msg.ObjectType != broker.ExecOutputObject {
			t.Fatalf("an exec message %s with %#v", msg.ObjectType, msg.Object)
		}
		shell += chunk
	}
	publish("input."+session, &broker.Message{ObjectType: broker.ExecInputObject,
		Object: "exit 3"})
	for {
		msg := next(t, output, done, "the end of the shell")
		if msg.ObjectType == broker.ErrorObject {
			if reason, _ := msg.Object.(string); !strings.Contains(reason, "3") {
				t.Fatalf("the shell ended with %#v, want its exit code 3", msg.Object)
			}
			break
		}
	}
	waitFor(t, "the input subscription gone", func() bool {
		return !subscribed(br, "input."+session)
	})
	waitFor(t, "no exec in kubesim", func() bool {
		var stats struct{ Execs int }
		sim.admin(t, "GET", "stats", nil, &stats)
		return stats.Execs == 0
	})

	// A shell still open when the run is cancelled ends with it, its subscription too.
	open := fmt.Sprintf("exec.%s.solo.app.e2", sessionNamespace)
	publish(libmeshsync.RequestSubject, sessionRequest(broker.ExecRequestEntity,
		map[string]interface{}{"id": "e2", "name": "solo", "namespace": sessionNamespace,
			"container": "app"}))
	waitFor(t, "the second shell's input subscription", func() bool {
		return subscribed(br, "input."+open)
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
	if subscribed(br, "input."+open) {
		t.Errorf("input.%s still subscribed after Run returned", open)
	}
	waitFor(t, "no exec in kubesim after the run", func() bool {
		var stats struct{ Execs int }
		sim.admin(t, "GET", "stats", nil, &stats)
		return stats.Execs == 0
	})
}
