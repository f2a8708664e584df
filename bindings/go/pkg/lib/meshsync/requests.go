package meshsync

/*
#include "msg-run.h"
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"unsafe"

	"github.com/meshery/meshkit/broker"

	"meshsync/bindings/go/pkg/model"
)

// Requests arrive here through the broker handler, as upstream's library takes them.
const (
	RequestSubject = "meshery.meshsync.request"
	requestQueue   = "meshsync-request-stream"
	metaSubject    = "meshsync-meta"
	metaEntity     = "meshsync-meta"
	storeEntity    = "informer-store"
	storeBatch     = 5
)

// serveRequests answers the requests sent through the handler until stopped is closed:
// meshsync-meta with the version given to Run, resync-discovery by relisting every type,
// informer-store with every object held, in batches of five on the reply subject; log-stream,
// exec-request and active-exec go to the engine.
// Then it unsubscribes and drops what was still on its way.
func (r *run) serveRequests(requests chan *broker.Message, stopped <-chan struct{}, version string) {
	for {
		select {
		case msg := <-requests:
			r.answer(msg, version)
		case <-stopped:
			if err := r.handler.Unsubscribe(RequestSubject); err != nil {
				r.warn(err)
			}
			for {
				select {
				case <-requests:
				default:
					return
				}
			}
		}
	}
}

func (r *run) answer(msg *broker.Message, version string) {
	if msg == nil || msg.Request == nil {
		r.warn(fmt.Errorf("meshsync: a message on %s without a request", RequestSubject))
		return
	}
	switch msg.Request.Entity {
	case metaEntity:
		reply := &broker.Message{Object: version}
		if err := r.handler.Publish(metaSubject, reply); err != nil {
			r.warn(fmt.Errorf("meshsync: replying on %s: %w", metaSubject, err))
		}
	case broker.ReSyncDiscoveryEntity:
		C.msg_run_resync(r.c)
	case storeEntity:
		r.answerStore(msg.Request.Payload)
	default:
		// log streams, exec shells and the active-exec ticker run in the engine, which
		// publishes and subscribes through the handler (bus.go)
		if sessionEntities[msg.Request.Entity] {
			r.forward(msg)
		}
	}
}

// answerStore publishes the store as upstream does: nothing when it is empty or before the
// first sync, else batches of up to five KubernetesResource values on the reply subject.
func (r *run) answerStore(payload interface{}) {
	// The payload is whatever Go value the sender put there ({"Reply": ...} over NATS);
	// JSON matches its key as upstream's decoding does, case-insensitively.
	var request struct{ Reply string }
	raw, err := json.Marshal(payload)
	if err == nil {
		err = json.Unmarshal(raw, &request)
	}
	if err != nil || request.Reply == "" {
		r.warn(fmt.Errorf("meshsync: an informer-store request without a reply subject"))
		return
	}
	store := C.msg_run_dup_store(r.c)
	if store == nil {
		return
	}
	objects := make([][]byte, 0, int(store.len))
	for _, bytes := range unsafe.Slice((**C.GBytes)(unsafe.Pointer(store.pdata)), int(store.len)) {
		var size C.gsize
		data := C.g_bytes_get_data(bytes, &size)
		objects = append(objects, C.GoBytes(unsafe.Pointer(data), C.int(size)))
	}
	C.g_ptr_array_unref(store)

	batch := make([]model.KubernetesResource, 0, storeBatch)
	flush := func() {
		if len(batch) == 0 {
			return
		}
		if err := r.handler.Publish(request.Reply, &broker.Message{Object: batch}); err != nil {
			r.warn(fmt.Errorf("meshsync: replying on %s: %w", request.Reply, err))
		}
		batch = make([]model.KubernetesResource, 0, storeBatch)
	}
	for _, data := range objects {
		var resource model.KubernetesResource
		if err := json.Unmarshal(data, &resource); err != nil {
			r.warn(fmt.Errorf("meshsync: cannot decode a stored object: %w", err))
			continue
		}
		batch = append(batch, resource)
		if len(batch) == storeBatch {
			flush()
		}
	}
	flush()
}
