// What upstream MeshSync does with one watch event, step by step, on Go's encoding/json.
// Each step names the upstream (or client-go) step it stands for; the numbers are those of
// ParseList in the wire contract's conversion algorithm.
package peer

import (
	"bytes"
	"encoding/json"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Stages, in pipeline order; -until cuts the pipeline after one of them to see where the
// time goes.
const (
	stageFrame = iota
	stageWatchEvent
	stageObject
	stageStore
	stageMarshal
	stageModel
	stageExtract
	stageEnvelope
)

// StageNames are the stages by name, the index of each being its Until value.
var StageNames = []string{"frame", "watchevent", "object", "store", "marshal", "model",
	"extract", "envelope"}

// watchEvent stands for metav1.WatchEvent: the object stays raw bytes (a RawExtension)
// until the embedded decoder turns it into an unstructured object.
type watchEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// Peer is the hot path of one informer and its handlers. Set its exported fields before
// the first Line.
type Peer struct {
	clusterID string
	Until     int    // the last stage done (StageNames)
	Extract   string // "scan" (jsonparser-like) or "rawmessage" (encoding/json)
	Sniff     bool   // client-go serializer's extra decodes (kind sniff, list detector)
	events    []string

	// the informer's indexer: key -> object, plus its namespace index
	mu    sync.Mutex
	items map[string]map[string]interface{}
	byNS  map[string]map[string]struct{}

	Published, Skipped, BytesOut int64
	Emit                         func([]byte) // each envelope, as the broker writer sends it
	// Deliver, when set, takes each converted model in place of the envelope: upstream's
	// library in embedded mode hands the KubernetesResource value to a meshkit broker
	// handler (the channel broker) instead of marshalling it for NATS.
	Deliver func(event string, res *KubernetesResource)
}

// New is a peer that does every stage, for the cluster @clusterID.
func New(clusterID string) *Peer {
	p := &Peer{clusterID: clusterID, Until: stageEnvelope, Extract: "scan",
		events: []string{"ADDED", "MODIFIED", "DELETED"}}
	p.Reset()
	return p
}

// Reset empties the informer cache, so that replaying the same events in another round
// does the same work (a MODIFIED whose resourceVersion equals the cached one is skipped).
func (p *Peer) Reset() {
	p.items = make(map[string]map[string]interface{})
	p.byNS = make(map[string]map[string]struct{})
}

// ConvertNumbers stands for the unstructured decoder's int-preserving number handling
// (sigs.k8s.io/json with PreserveInts): integers become int64, other numbers float64.
func ConvertNumbers(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		for k, e := range t {
			t[k] = ConvertNumbers(e)
		}
	case []interface{}:
		for i, e := range t {
			t[i] = ConvertNumbers(e)
		}
	case json.Number:
		if n, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return n
		}
		f, _ := strconv.ParseFloat(string(t), 64)
		return f
	}
	return v
}

func nestedString(obj map[string]interface{}, keys ...string) string {
	var cur interface{} = obj
	for _, k := range keys {
		m, ok := cur.(map[string]interface{})
		if !ok {
			return ""
		}
		cur = m[k]
	}
	s, _ := cur.(string)
	return s
}

// Line handles one watch frame (one line of the events file).
func (p *Peer) Line(frame []byte) {
	if p.Until < stageWatchEvent {
		return
	}
	if p.Sniff {
		// client-go's JSON serializer first sniffs apiVersion/kind of the frame.
		var kind struct {
			APIVersion string `json:"apiVersion,omitempty"`
			Kind       string `json:"kind,omitempty"`
		}
		_ = json.Unmarshal(frame, &kind)
	}
	// client-go watch decoder: the frame into a WatchEvent, the object kept raw.
	var ev watchEvent
	if json.Unmarshal(frame, &ev) != nil {
		return
	}
	if ev.Type != "ADDED" && ev.Type != "MODIFIED" && ev.Type != "DELETED" {
		return // BOOKMARK and ERROR never reach the handlers
	}
	if p.Until < stageObject {
		return
	}
	if p.Sniff {
		// the unstructured scheme checks whether the object is a list ("items").
		var detector struct {
			Items json.RawMessage `json:"items"`
		}
		_ = json.Unmarshal(ev.Object, &detector)
	}
	// client-go embedded decoder: the object into unstructured (map[string]interface{}).
	dec := json.NewDecoder(bytes.NewReader(ev.Object))
	dec.UseNumber()
	var obj map[string]interface{}
	if dec.Decode(&obj) != nil || obj == nil {
		return
	}
	ConvertNumbers(obj)
	if p.Until < stageStore {
		return
	}
	p.informer(ev.Type, obj)
}

// informer stands for the reflector, DeltaFIFO, indexer and event handlers of a shared
// informer (without their goroutine hand-offs): the cache keyed by namespace/name, then
// upstream's Add/Update/Delete handlers (pipeline/handlers.go).
func (p *Peer) informer(typ string, obj map[string]interface{}) {
	ns := nestedString(obj, "metadata", "namespace")
	key := nestedString(obj, "metadata", "name")
	if ns != "" {
		key = ns + "/" + key
	}
	p.mu.Lock()
	old, had := p.items[key]
	if typ == "DELETED" {
		delete(p.items, key)
		if set := p.byNS[ns]; set != nil {
			delete(set, key)
		}
	} else {
		p.items[key] = obj
		set := p.byNS[ns]
		if set == nil {
			set = make(map[string]struct{})
			p.byNS[ns] = set
		}
		set[key] = struct{}{}
	}
	p.mu.Unlock()

	switch {
	case typ == "DELETED":
		p.publish(obj, "DELETED")
	case typ == "MODIFIED" && had:
		// Update handler: resourceVersions compared as opaque strings.
		if nestedString(old, "metadata", "resourceVersion") ==
			nestedString(obj, "metadata", "resourceVersion") {
			p.Skipped++
			return
		}
		p.publish(obj, "MODIFIED")
	default:
		// ADDED, or a MODIFIED of an object the cache did not hold (client-go adds it)
		p.publish(obj, "ADDED")
	}
}

// publish stands for the publish path of the handlers: the event filter, ParseList, the
// namespace filter (none configured) and the broker writer.
func (p *Peer) publish(obj map[string]interface{}, event string) {
	wanted := false
	for _, e := range p.events {
		if e == event {
			wanted = true
			break
		}
	}
	if !wanted || p.Until < stageMarshal {
		return
	}
	res, ok := p.ParseList(obj, event)
	if !ok || p.Until < stageEnvelope {
		return
	}
	if p.Deliver != nil {
		p.Published++
		p.Deliver(event, res)
		return
	}
	// broker writer (meshkit's NATS handler): the envelope marshalled with Go JSON. The
	// NATS publish itself is left out.
	msg, err := json.Marshal(&Message{ObjectType: "meshsync-data", EventType: event,
		Request: nil, Object: res})
	if err != nil {
		return
	}
	p.Published++
	p.BytesOut += int64(len(msg))
	if p.Emit != nil {
		p.Emit(msg)
	}
}

const patternLabel = "design.meshery.io/id"

// ParseList stands for upstream's model conversion (ParseList).
func (p *Peer) ParseList(obj map[string]interface{}, event string) (*KubernetesResource, bool) {
	// 1. the whole unstructured object serialised to JSON (sorted keys, HTML-escaped).
	data, err := json.Marshal(obj)
	if err != nil || p.Until < stageModel {
		return nil, false
	}
	// 2. that text decoded into a fresh model with the lenient decoder; type mismatches
	// (labels, annotations, ownerReferences, finalizers, data, immutable...) are skipped.
	var res KubernetesResource
	_ = json.Unmarshal(data, &res)
	if p.Until < stageExtract {
		return nil, false
	}
	// 3. per-Kind processor lookup (only Service has one upstream; left out, see README).
	_ = processors[res.Kind]

	if p.Extract == "rawmessage" {
		p.extractRawMessage(data, &res)
	} else {
		p.extractScan(data, &res)
	}
	// 14. top-level cluster id.
	res.ClusterID = p.clusterID
	// 16. no ID is computed.
	return &res, true
}

var processors = map[string]func([]byte, *KubernetesResource, string) error{"Service": nil}

// extractScan does steps 4-13 the way upstream does: one jsonparser-style search of data
// per field.
func (p *Peer) extractScan(data []byte, res *KubernetesResource) {
	// 4. labels: every member of metadata.labels, key decoded, value raw.
	res.Metadata.Labels = []*KeyValue{}
	rawEach(data, func(key, value []byte, _ rawKind) {
		res.Metadata.Labels = append(res.Metadata.Labels,
			&KeyValue{Kind: "label", Key: string(key), Value: string(value)})
		if string(key) == patternLabel {
			res.PatternResource = patternUUID(value)
		}
	}, "metadata", "labels")
	// 5. annotations, likewise.
	res.Metadata.Annotations = []*KeyValue{}
	rawEach(data, func(key, value []byte, _ rawKind) {
		res.Metadata.Annotations = append(res.Metadata.Annotations,
			&KeyValue{Kind: "annotation", Key: string(key), Value: string(value)})
	}, "metadata", "annotations")
	// 6. finalizers as raw JSON text.
	if v, _, ok := rawGet(data, "metadata", "finalizers"); ok {
		res.Metadata.Finalizers = string(v)
	}
	// 7. managedFields: not captured upstream.
	// 8. ownerReferences as raw JSON text.
	if v, _, ok := rawGet(data, "metadata", "ownerReferences"); ok {
		res.Metadata.OwnerReferences = string(v)
	}
	// 9. spec and status attributes as raw JSON text. (Upstream dereferences a nil Spec
	// for "spec": null and crashes; the peer skips it instead.)
	if v, _, ok := rawGet(data, "spec"); ok && res.Spec != nil {
		res.Spec.Attribute = string(v)
	}
	if v, _, ok := rawGet(data, "status"); ok && res.Status != nil {
		res.Status.Attribute = string(v)
	}
	// 10. immutable as its literal text.
	if v, _, ok := rawGet(data, "immutable"); ok {
		res.Immutable = string(v)
	}
	// 11. Secret redaction decision.
	redact := res.Kind == "Secret" && redactSecrets()
	// 12. data, binaryData, stringData as raw JSON text (redacted for Secrets if asked).
	if v, _, ok := rawGet(data, "data"); ok {
		res.Data = maybeRedact(string(v), redact)
	}
	if v, _, ok := rawGet(data, "binaryData"); ok {
		res.BinaryData = maybeRedact(string(v), redact)
	}
	if v, _, ok := rawGet(data, "stringData"); ok {
		res.StringData = maybeRedact(string(v), redact)
	}
	// 13. type as raw text.
	if v, _, ok := rawGet(data, "type"); ok {
		res.Type = string(v)
	}
}

// rawView is the -extract=rawmessage alternative: the raw spans of steps 4-13 taken with
// one more encoding/json decode of data into json.RawMessage fields.
type rawView struct {
	Metadata struct {
		Labels          map[string]json.RawMessage `json:"labels"`
		Annotations     map[string]json.RawMessage `json:"annotations"`
		Finalizers      json.RawMessage            `json:"finalizers"`
		OwnerReferences json.RawMessage            `json:"ownerReferences"`
	} `json:"metadata"`
	Spec       json.RawMessage `json:"spec"`
	Status     json.RawMessage `json:"status"`
	Immutable  json.RawMessage `json:"immutable"`
	Data       json.RawMessage `json:"data"`
	BinaryData json.RawMessage `json:"binaryData"`
	StringData json.RawMessage `json:"stringData"`
	Type       json.RawMessage `json:"type"`
}

// rawText turns a RawMessage into what jsonparser would return: strings without their
// quotes (still escaped), null as "", anything else verbatim.
func rawText(m json.RawMessage) string {
	if len(m) >= 2 && m[0] == '"' {
		return string(m[1 : len(m)-1])
	}
	if string(m) == "null" {
		return ""
	}
	return string(m)
}

func keyValues(m map[string]json.RawMessage, kind string, res *KubernetesResource) []*KeyValue {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*KeyValue, 0, len(keys))
	for _, k := range keys {
		v := rawText(m[k])
		out = append(out, &KeyValue{Kind: kind, Key: k, Value: v})
		if kind == "label" && k == patternLabel {
			res.PatternResource = patternUUID([]byte(v))
		}
	}
	return out
}

func (p *Peer) extractRawMessage(data []byte, res *KubernetesResource) {
	var v rawView
	_ = json.Unmarshal(data, &v)
	res.Metadata.Labels = keyValues(v.Metadata.Labels, "label", res)
	res.Metadata.Annotations = keyValues(v.Metadata.Annotations, "annotation", res)
	if v.Metadata.Finalizers != nil {
		res.Metadata.Finalizers = rawText(v.Metadata.Finalizers)
	}
	if v.Metadata.OwnerReferences != nil {
		res.Metadata.OwnerReferences = rawText(v.Metadata.OwnerReferences)
	}
	if v.Spec != nil && res.Spec != nil {
		res.Spec.Attribute = rawText(v.Spec)
	}
	if v.Status != nil && res.Status != nil {
		res.Status.Attribute = rawText(v.Status)
	}
	if v.Immutable != nil {
		res.Immutable = rawText(v.Immutable)
	}
	redact := res.Kind == "Secret" && redactSecrets()
	if v.Data != nil {
		res.Data = maybeRedact(rawText(v.Data), redact)
	}
	if v.BinaryData != nil {
		res.BinaryData = maybeRedact(rawText(v.BinaryData), redact)
	}
	if v.StringData != nil {
		res.StringData = maybeRedact(rawText(v.StringData), redact)
	}
	if v.Type != nil {
		res.Type = rawText(v.Type)
	}
}

// patternUUID reproduces upstream's pattern_resource: a UUID made from the raw bytes of the
// label value, which fails (zero UUID) unless the value is exactly 16 bytes long.
func patternUUID(value []byte) *UUID {
	var u UUID
	if len(value) == 16 {
		copy(u[:], value)
	}
	return &u
}

func redactSecrets() bool {
	v := os.Getenv("MESHSYNC_REDACT_SECRETS")
	return strings.ToLower(v) == "true" || v == "1"
}

// maybeRedact: every value of the object replaced by "[REDACTED]"; empty stays empty,
// anything that is not an object stays as it was.
func maybeRedact(raw string, redact bool) string {
	if !redact || raw == "" {
		return raw
	}
	var m map[string]interface{}
	if json.Unmarshal([]byte(raw), &m) != nil || m == nil {
		return raw
	}
	for k := range m {
		m[k] = "[REDACTED]"
	}
	out, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return string(out)
}
