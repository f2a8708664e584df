package meshsync

/*
#include "msg-run.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/sirupsen/logrus"
)

// logQueue bounds the engine's lines waiting for the logger: the engine's thread never waits
// for a slow logger, and past this many lines they are counted and said once at the end.
const logQueue = 1024

type logLine struct {
	severity C.int
	text     string
}

// logSink carries the engine's lines of one run from its thread to its logger.
type logSink struct {
	lines   chan logLine
	dropped atomic.Int64
	done    chan struct{}
}

// startLogging routes the engine's lines to r.log (standard error without one) until
// stopLogging; debug lines only when the logger is at debug level.
func (r *run) startLogging() {
	r.logs = &logSink{lines: make(chan logLine, logQueue), done: make(chan struct{})}
	if r.log != nil && r.log.GetLevel() >= logrus.DebugLevel {
		C.msg_run_set_log_debug(r.c, 1)
	}
	go func(sink *logSink) {
		defer close(sink.done)
		for line := range sink.lines {
			r.writeLine(line)
		}
		if n := sink.dropped.Load(); n > 0 {
			r.writeLine(logLine{C.MSG_LOG_WARNING,
				fmt.Sprintf("meshsync: %d engine log lines were dropped: the logger fell behind", n)})
		}
	}(r.logs)
}

// stopLogging waits until every queued line is written. Called once the engine's thread has
// left msg_run_execute, after which no line of this run comes.
func (r *run) stopLogging() {
	close(r.logs.lines)
	<-r.logs.done
}

func (r *run) writeLine(line logLine) {
	if r.log == nil {
		fmt.Fprintln(os.Stderr, line.text)
		return
	}
	switch line.severity {
	case C.MSG_LOG_ERROR:
		r.log.Error(errors.New(line.text))
	case C.MSG_LOG_WARNING:
		r.log.Warn(errors.New(line.text))
	case C.MSG_LOG_DEBUG:
		r.log.Debug(line.text)
	default:
		r.log.Info(line.text)
	}
}

//export msgLog
func msgLog(handle C.uintptr_t, severity C.int, text *C.char) {
	r := cgoRun(handle)
	select {
	case r.logs.lines <- logLine{severity, C.GoString(text)}:
	default:
		r.logs.dropped.Add(1)
	}
}
