package meshsync

/*
#include <stdlib.h>
#include "msg-run.h"
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/meshery/meshkit/broker"

	"meshsync/bindings/go/pkg/model"
)

// The engine's sessions (log streams, exec shells) and the active-exec ticker publish and
// subscribe through the broker handler: the engine sees it as its MeshSyncBus (msg-run.c).
// What they publish waits in the outbox, at most outboxSize messages, for one goroutine
// that hands it to the handler in order; a full outbox refuses the message, which the
// engine counts as dropped session output, as it does for a NATS server that is away.
const outboxSize = 1024

type outbound struct {
	subject string
	message *broker.Message
}

// busSubscription is one subscription of the engine's on the handler: its messages go back
// to the engine until stop is closed.
type busSubscription struct {
	subject string
	stop    chan struct{}
}

type bus struct {
	outbox chan outbound
	done   chan struct{} // closed when the run ends: the outbox is drained and left

	mu   sync.Mutex
	subs map[uint]*busSubscription
	wg   sync.WaitGroup // the subscriptions' goroutines and the outbox's
}

func newBus() *bus {
	return &bus{outbox: make(chan outbound, outboxSize), done: make(chan struct{}),
		subs: make(map[uint]*busSubscription)}
}

// sessionEntities are the requests the engine answers itself through the bus.
var sessionEntities = map[broker.RequestEntity]bool{
	broker.LogRequestEntity:  true,
	broker.ExecRequestEntity: true,
	broker.ActiveExecEntity:  true,
}

// forward hands a request to the engine as upstream's envelope.
func (r *run) forward(msg *broker.Message) {
	data, err := json.Marshal(msg)
	if err != nil {
		r.warn(fmt.Errorf("meshsync: cannot encode a %s request: %w", msg.Request.Entity, err))
		return
	}
	C.msg_run_request(r.c, (*C.char)(unsafe.Pointer(&data[0])), C.size_t(len(data)))
}

//export msgBusPublish
func msgBusPublish(handle C.uintptr_t, subject *C.char, data *C.char, length C.size_t) C.int {
	r := cgoRun(handle)
	message, err := decodeEnvelope(C.GoBytes(unsafe.Pointer(data), C.int(length)))
	if err != nil {
		r.warn(err)
		return 1 // not the handler's fault: nothing to try again
	}
	select {
	case r.bus.outbox <- outbound{subject: C.GoString(subject), message: message}:
		return 1
	default:
		return 0
	}
}

//export msgBusSubscribe
func msgBusSubscribe(handle C.uintptr_t, id C.uint, subject *C.char, queue *C.char) *C.char {
	r := cgoRun(handle)
	sub := &busSubscription{subject: C.GoString(subject), stop: make(chan struct{})}
	ch := make(chan *broker.Message, 256)
	if err := r.handler.SubscribeWithChannel(sub.subject, C.GoString(queue), ch); err != nil {
		return C.CString(err.Error())
	}
	r.bus.mu.Lock()
	r.bus.subs[uint(id)] = sub
	r.bus.wg.Add(1)
	r.bus.mu.Unlock()
	go func() {
		defer r.bus.wg.Done()
		csubject := C.CString(sub.subject)
		defer C.free(unsafe.Pointer(csubject))
		for {
			select {
			case msg := <-ch:
				data, err := json.Marshal(msg)
				if err != nil || len(data) == 0 {
					r.warn(fmt.Errorf("meshsync: cannot encode a message on %s: %v", sub.subject, err))
					continue
				}
				C.msg_run_bus_deliver(r.c, id, csubject, (*C.char)(unsafe.Pointer(&data[0])),
					C.size_t(len(data)))
			case <-sub.stop:
				return
			}
		}
	}()
	return nil
}

//export msgBusUnsubscribe
func msgBusUnsubscribe(handle C.uintptr_t, id C.uint) {
	cgoRun(handle).unsubscribe(uint(id))
}

func (r *run) unsubscribe(id uint) {
	r.bus.mu.Lock()
	sub := r.bus.subs[id]
	delete(r.bus.subs, id)
	r.bus.mu.Unlock()
	if sub == nil {
		return
	}
	close(sub.stop)
	if err := r.handler.Unsubscribe(sub.subject); err != nil {
		r.warn(fmt.Errorf("meshsync: unsubscribing from %s: %w", sub.subject, err))
	}
}

// sendOutbox hands what the engine published to the handler, in order, until the run
// ends; a publish the handler fails is tried again while the run goes on.
func (r *run) sendOutbox() {
	defer r.bus.wg.Done()
	for {
		select {
		case out := <-r.bus.outbox:
			r.sendOne(out)
		case <-r.bus.done:
			for {
				select {
				case out := <-r.bus.outbox:
					r.sendOne(out)
				default:
					return
				}
			}
		}
	}
}

func (r *run) sendOne(out outbound) {
	for backoff := 50 * time.Millisecond; ; backoff = min(2*backoff, time.Second) {
		err := r.handler.Publish(out.subject, out.message)
		if err == nil {
			return
		}
		select {
		case <-r.bus.done:
			r.warn(fmt.Errorf("meshsync: the run ended before the handler took a message on %s: %w",
				out.subject, err))
			return
		default:
		}
		r.warn(fmt.Errorf("meshsync: publish on %s failed, trying again: %w", out.subject, err))
		time.Sleep(backoff)
	}
}

// close ends what is left: subscriptions the engine did not end itself, and the outbox.
func (b *bus) close(r *run) {
	b.mu.Lock()
	ids := make([]uint, 0, len(b.subs))
	for id := range b.subs {
		ids = append(ids, id)
	}
	b.mu.Unlock()
	for _, id := range ids {
		r.unsubscribe(id)
	}
	close(b.done)
	b.wg.Wait()
}

// decodeEnvelope turns an envelope the engine publishes into the message upstream's library
// would have published: its Object the Go value upstream put there (a *model.LogObject for
// a log chunk, a string for exec output and errors, the session ids for active-exec).
func decodeEnvelope(data []byte) (*broker.Message, error) {
	var envelope struct {
		ObjectType broker.ObjectType
		EventType  broker.EventType
		Request    *broker.RequestObject
		Object     json.RawMessage
	}
	if err := json.Unmarshal(data, &envelope); err != nil {
		return nil, fmt.Errorf("meshsync: cannot decode a session message: %w", err)
	}
	message := &broker.Message{ObjectType: envelope.ObjectType, EventType: envelope.EventType,
		Request: envelope.Request}
	var err error
	switch envelope.ObjectType {
	case broker.LogStreamObject:
		var object model.LogObject
		err = json.Unmarshal(envelope.Object, &object)
		message.Object = &object
	case broker.ActiveExecObject:
		var ids []string
		err = json.Unmarshal(envelope.Object, &ids)
		message.Object = ids
	case broker.ExecOutputObject, broker.ErrorObject:
		var text string
		err = json.Unmarshal(envelope.Object, &text)
		message.Object = text
	default:
		var object interface{}
		if len(envelope.Object) > 0 {
			err = json.Unmarshal(envelope.Object, &object)
		}
		message.Object = object
	}
	if err != nil {
		return nil, fmt.Errorf("meshsync: cannot decode a %s message: %w", envelope.ObjectType, err)
	}
	return message, nil
}
