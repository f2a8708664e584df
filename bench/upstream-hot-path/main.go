// upstream-hot-path replays recorded Kubernetes watch events through a rebuild of upstream
// MeshSync's per-event work on Go's encoding/json (see peer/convert.go and README.md) and
// reports the CPU it took per published event. It does not talk to NATS.
//
//	upstream-hot-path -events FILE [-rounds N] [-warmup N] [-cluster-id ID]
//	                  [-extract scan|rawmessage] [-sniff] [-until STAGE] [-out FILE]
//	                  [-cpuprofile FILE]
//	upstream-hot-path -check OBJECT.json [-event ADDED] [-cluster-id ID]
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"

	"meshsync.invalid/bench/upstream-hot-path/peer"
	"syscall"
	"time"
)

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// round replays the whole file once. client-go's JSON framer splits the watch stream with
// a json.Decoder reading one raw value at a time; the peer does the same over the bytes
// read into memory beforehand, so no file I/O is timed.
func round(p *peer.Peer, input []byte) (lines int64) {
	p.Reset()
	dec := json.NewDecoder(bytes.NewReader(input))
	for {
		var frame json.RawMessage
		if err := dec.Decode(&frame); err != nil {
			if err != io.EOF {
				fmt.Fprintf(os.Stderr, "upstream-hot-path: bad frame after %d lines: %v\n", lines, err)
			}
			return lines
		}
		lines++
		p.Line(frame)
	}
}

func check(path, event, clusterID string) int {
	text, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var obj map[string]interface{}
	if err := dec.Decode(&obj); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	peer.ConvertNumbers(obj)
	p := peer.New(clusterID)
	res, ok := p.ParseList(obj, event)
	if !ok {
		return 1
	}
	out, err := json.Marshal(res)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("%s\n", out)
	return 0
}

func main() {
	events := flag.String("events", "", "file of watch lines, one {\"type\":..,\"object\":..} per line")
	rounds := flag.Int("rounds", 10, "measured replays of the whole file")
	warmup := flag.Int("warmup", 1, "unmeasured replays before them")
	clusterID := flag.String("cluster-id", "00000000-0000-4000-8000-000000000000", "cluster_id to set")
	extract := flag.String("extract", "scan", "raw extraction: scan (jsonparser-like) or rawmessage")
	sniff := flag.Bool("sniff", false, "also do client-go serializer's kind sniff and list detector decodes")
	until := flag.String("until", "envelope", "stop after this stage: frame, watchevent, object, store, marshal, model, extract, envelope")
	outPath := flag.String("out", "", "write the envelopes of the warm-up round to this file, one per line")
	checkPath := flag.String("check", "", "convert one object file and print the model JSON, then exit")
	event := flag.String("event", "ADDED", "event type for -check")
	profile := flag.String("cpuprofile", "", "write a pprof CPU profile of the measured rounds to this file")
	flag.Parse()

	if *checkPath != "" {
		os.Exit(check(*checkPath, *event, *clusterID))
	}
	if *events == "" || *rounds < 1 || (*extract != "scan" && *extract != "rawmessage") {
		flag.Usage()
		os.Exit(2)
	}
	input, err := os.ReadFile(*events)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	p := peer.New(*clusterID)
	p.Extract = *extract
	p.Sniff = *sniff
	p.Until = -1
	for i, n := range peer.StageNames {
		if n == *until {
			p.Until = i
		}
	}
	if p.Until < 0 {
		flag.Usage()
		os.Exit(2)
	}

	var out *bufio.Writer
	if *outPath != "" {
		f, err := os.Create(*outPath)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer f.Close()
		out = bufio.NewWriter(f)
		defer out.Flush()
		if *warmup < 1 {
			*warmup = 1
		}
	}
	for i := 0; i < *warmup; i++ {
		if i == 0 && out != nil {
			p.Emit = func(b []byte) { out.Write(b); out.WriteByte('\n') }
		}
		round(p, input)
		p.Emit = nil
	}
	p.Published, p.Skipped, p.BytesOut = 0, 0, 0

	runtime.GC()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer f.Close()
	}
	cpu0, t0 := cpuSeconds(), time.Now()
	var lines int64
	for i := 0; i < *rounds; i++ {
		lines += round(p, input)
	}
	cpu, wall := cpuSeconds()-cpu0, time.Since(t0).Seconds()
	if *profile != "" {
		pprof.StopCPUProfile()
	}

	perEvent := 0.0
	if p.Published > 0 {
		perEvent = cpu / float64(p.Published) * 1e6
	} else if lines > 0 {
		perEvent = cpu / float64(lines) * 1e6 // a cut pipeline publishes nothing
	}
	result := map[string]interface{}{
		"go":               runtime.Version(),
		"gomaxprocs":       runtime.GOMAXPROCS(0),
		"extract":          *extract,
		"sniff":            *sniff,
		"until":            *until,
		"rounds":           *rounds,
		"lines":            lines,
		"events":           p.Published,
		"skipped":          p.Skipped,
		"cpu_seconds":      cpu,
		"wall_seconds":     wall,
		"us_cpu_per_event": perEvent,
		"bytes_in":         int64(len(input)) * int64(*rounds),
		"bytes_out":        p.BytesOut,
	}
	text, _ := json.Marshal(result)
	fmt.Printf("%s\n", text)
}
