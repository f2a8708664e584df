// Package meshsync runs the C MeshSync engine (libmeshsync-1) inside a Go process, with the
// entry point and options of upstream's github.com/meshery/meshsync/pkg/lib/meshsync, so that
// Meshery Server embeds it by changing one import path. See doc/embedding.md.
package meshsync

/*
#cgo pkg-config: meshsync-1
#include <stdlib.h>
#include "msg-run.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/cgo"
	"sync"
	"time"
	"unsafe"

	"github.com/meshery/meshkit/broker"
	"github.com/meshery/meshkit/logger"
)

// Run syncs one cluster until the context is done, the stop-after duration elapses or the
// engine fails to start; a stop asked for is not an error.
func Run(log logger.Handler, optsSetters ...OptionsSetter) error {
	options := DefaultOptions
	for _, set := range optsSetters {
		set(&options)
	}
	if options.Context == nil {
		options.Context = context.Background()
	}
	if options.Version == "" {
		options.Version = EngineVersion()
	}

	r := &run{log: log, handler: options.BrokerHandler, ready: options.ready,
		heldHook: options.held}
	handle := cgo.NewHandle(r)
	defer handle.Delete()
	r.c = C.msg_run_new(C.uintptr_t(handle))
	defer C.msg_run_free(r.c)
	if err := r.configure(&options); err != nil {
		return err
	}
	if options.OutputMode != OutputModeBroker {
		r.handler = nil
	}

	// Requests come through the handler too.
	requestsStopped := make(chan struct{})
	var requests sync.WaitGroup
	if r.handler != nil {
		ch := make(chan *broker.Message, 64)
		if err := r.handler.SubscribeWithChannel(RequestSubject, requestQueue, ch); err != nil {
			return fmt.Errorf("meshsync: subscribing to %s: %w", RequestSubject, err)
		}
		requests.Add(1)
		go func() {
			defer requests.Done()
			r.serveRequests(ch, requestsStopped, options.Version)
		}()
	}

	// The publisher hands events to the Go handler, off the engine's thread; the bus does
	// the same for the sessions' messages.
	var publisher sync.WaitGroup
	if r.handler != nil {
		r.bus = newBus()
		r.bus.wg.Add(1)
		go r.sendOutbox()
		r.cond = sync.NewCond(&r.mu)
		publisher.Add(1)
		go func() {
			defer publisher.Done()
			r.publish()
		}()
	}

	// The stopper turns the context and the stop-after duration into a stop of the engine.
	executed := make(chan struct{})
	var stopper sync.WaitGroup
	stopper.Add(1)
	go func() {
		defer stopper.Done()
		var after <-chan time.Time
		if options.StopAfterDuration >= 0 {
			timer := time.NewTimer(options.StopAfterDuration)
			defer timer.Stop()
			after = timer.C
		}
		select {
		case <-options.Context.Done():
		case <-after:
		case <-executed:
			return
		}
		C.msg_run_stop(r.c)
	}()

	r.startLogging()
	// The engine runs on a thread of its own: every GLib object of the run belongs to the
	// main context it creates there. The goroutine ends still locked, so Go ends that
	// thread with it and no thread outlives the run.
	result := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		message := C.msg_run_execute(r.c)
		if message == nil {
			result <- nil
			return
		}
		result <- errors.New(C.GoString(message))
		C.free(unsafe.Pointer(message))
	}()
	err := <-result
	r.stopLogging()
	close(executed)
	stopper.Wait()
	close(requestsStopped)
	requests.Wait()
	if r.bus != nil {
		r.bus.close(r)
	}
	if r.handler != nil {
		r.mu.Lock()
		r.stopped = true
		r.cond.Broadcast()
		r.mu.Unlock()
		publisher.Wait()
	}
	return err
}

// EngineVersion is the version of the C engine the package runs: the build's (for example
// v0.1.0-412-gb4d06c3, the release and the commit), as the daemon's --version says it.
func EngineVersion() string {
	return C.GoString(C.meshsync_get_version())
}

func (r *run) configure(o *Options) error {
	if o.KubeConfig != nil {
		data := C.CBytes(o.KubeConfig)
		defer C.free(data)
		C.msg_run_set_kubeconfig(r.c, (*C.char)(data), C.size_t(len(o.KubeConfig)))
	}
	switch o.OutputMode {
	case OutputModeFile:
		var path *C.char
		if o.OutputFileName != "" {
			path = C.CString(o.OutputFileName)
			defer C.free(unsafe.Pointer(path))
		}
		C.msg_run_set_file(r.c, path, cBool(o.OutputExtendedFile))
	case OutputModeBroker:
		if o.BrokerHandler != nil {
			C.msg_run_set_events_to_go(r.c)
			break
		}
		url := os.Getenv("BROKER_URL")
		if url == "" {
			return errors.New("meshsync: broker mode without a broker handler needs BROKER_URL")
		}
		curl := C.CString(url)
		defer C.free(unsafe.Pointer(curl))
		C.msg_run_set_broker_url(r.c, curl)
	default:
		return fmt.Errorf("meshsync: unknown output mode %q (broker or file)", o.OutputMode)
	}
	for _, ns := range o.OnlyK8sNamespaces {
		cns := C.CString(ns)
		C.msg_run_add_output_namespace(r.c, cns)
		C.free(unsafe.Pointer(cns))
	}
	for _, resource := range o.OnlyK8sResources {
		cres := C.CString(resource)
		C.msg_run_add_output_resource(r.c, cres)
		C.free(unsafe.Pointer(cres))
	}
	return nil
}

func cBool(value bool) C.gboolean {
	if value {
		return 1
	}
	return 0
}
