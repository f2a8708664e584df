package meshsync

/*
#include "msg-run.h"
*/
import "C"

import (
	"fmt"

	"github.com/meshery/meshkit/broker"
)

// Requests arrive here through the broker handler, as upstream's library takes them.
const (
	RequestSubject = "meshery.meshsync.request"
	requestQueue   = "meshsync-request-stream"
	metaSubject    = "meshsync-meta"
	metaEntity     = "meshsync-meta"
)

// serveRequests answers the requests sent through the handler until stopped is closed:
// meshsync-meta with the version given to Run, resync-discovery by relisting every type.
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
	}
}
