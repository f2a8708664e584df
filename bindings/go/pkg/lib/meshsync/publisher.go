package meshsync

/*
#include "msg-run.h"
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"time"
	"unsafe"

	"sync"

	"github.com/meshery/meshkit/broker"
	"github.com/meshery/meshkit/logger"

	"meshsync/bindings/go/pkg/model"
)

// Subject is where resource events are published, as upstream.
const Subject = "meshery.meshsync.core"

// The engine holds its events (as for a NATS server that does not keep up) while this many
// wait for the handler, and takes them again once the queue is down to lowWater.
const (
	highWater = 4096
	lowWater  = 1024
)

type event struct {
	eventType broker.EventType
	data      []byte
}

type run struct {
	log      logger.Handler
	handler  broker.Handler
	c        *C.MsgRun
	ready    func()
	heldHook func()
	logs     *logSink // the engine's lines on their way to log
	bus      *bus     // the sessions' messages, with a broker handler

	readyOnce sync.Once
	heldOnce  sync.Once

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []event
	held    bool // the engine was told the writer is not writable
	stopped bool // the engine has stopped: nothing more comes
	dropped int
}

//export msgDeliver
func msgDeliver(handle C.uintptr_t, eventType C.int, data *C.char, length C.size_t) {
	r := cgoRun(handle)
	e := event{data: C.GoBytes(unsafe.Pointer(data), C.int(length))}
	switch eventType {
	case C.MESHSYNC_EVENT_TYPE_MODIFIED:
		e.eventType = broker.Update
	case C.MESHSYNC_EVENT_TYPE_DELETED:
		e.eventType = broker.Delete
	default:
		e.eventType = broker.Add
	}
	r.mu.Lock()
	r.queue = append(r.queue, e)
	r.cond.Signal()
	r.mu.Unlock()
}

//export msgReady
func msgReady(handle C.uintptr_t) {
	r := cgoRun(handle)
	if r.ready != nil {
		r.readyOnce.Do(r.ready)
	}
}

//export msgWritable
func msgWritable(handle C.uintptr_t) C.int {
	r := cgoRun(handle)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.queue) >= highWater {
		r.held = true
		if r.heldHook != nil {
			r.heldOnce.Do(r.heldHook)
		}
		return 0
	}
	return 1
}

// next waits for an event; false once the engine stopped and everything was taken.
func (r *run) next() (event, bool) {
	r.mu.Lock()
	for len(r.queue) == 0 && !r.stopped {
		r.cond.Wait()
	}
	if len(r.queue) == 0 {
		r.mu.Unlock()
		return event{}, false
	}
	e := r.queue[0]
	r.queue[0] = event{}
	r.queue = r.queue[1:]
	release := r.held && len(r.queue) <= lowWater
	if release {
		r.held = false
	}
	r.mu.Unlock()
	if release {
		C.msg_run_writable_changed(r.c)
	}
	return e, true
}

// publish hands every event to the handler in order. A publish the handler fails (meshkit's
// channel broker fails one whose queue stayed full for its delay) is tried again, so a slow
// consumer slows the engine down rather than losing events; once the engine has stopped, a
// failure ends the delivery of what is left, so that Run returns.
func (r *run) publish() {
	for {
		e, ok := r.next()
		if !ok {
			return
		}
		var resource model.KubernetesResource
		if err := json.Unmarshal(e.data, &resource); err != nil {
			r.warn(fmt.Errorf("meshsync: cannot decode an event: %w", err))
			continue
		}
		message := &broker.Message{ObjectType: broker.MeshSync, EventType: e.eventType,
			Object: resource}
		for backoff := 50 * time.Millisecond; ; backoff = min(2*backoff, time.Second) {
			err := r.handler.Publish(Subject, message)
			if err == nil {
				break
			}
			r.mu.Lock()
			stopped := r.stopped
			if stopped {
				r.dropped = len(r.queue) + 1
				r.queue = nil
			}
			r.mu.Unlock()
			if stopped {
				r.warn(fmt.Errorf("meshsync: stopped with %d events the broker handler did not take: %w",
					r.dropped, err))
				return
			}
			r.warn(fmt.Errorf("meshsync: publish on %s failed, trying again: %w", Subject, err))
			time.Sleep(backoff)
		}
	}
}

func (r *run) warn(err error) {
	if r.log != nil {
		r.log.Warn(err)
	}
}
