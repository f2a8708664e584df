// The canonical model upstream MeshSync publishes, written from the wire contract (field
// names, JSON keys, omitempty and on-wire order). The GORM tags of upstream's structs only
// matter to Meshery Server's database and change nothing in encoding/json, so they are
// left out; the JSON tags are what shape the bytes.
package peer

// KeyValue is one label or annotation. Upstream keeps the value in its JSON-escaped form
// (the raw bytes between the quotes), so it is escaped again when the model is marshalled.
type KeyValue struct {
	ID       string `json:"id"`
	UniqueID string `json:"unique_id"`
	Kind     string `json:"kind"`
	Key      string `json:"key,omitempty"`
	Value    string `json:"value,omitempty"`
}

// ObjectMeta is the model's `metadata`. Labels, annotations, ownerReferences and finalizers
// have types that do not match the Kubernetes JSON on purpose (arrays of KeyValue, strings
// holding JSON): the first decode skips them with a type error and the raw-extraction step
// fills them in.
type ObjectMeta struct {
	ID                         string      `json:"id"`
	Name                       string      `json:"name,omitempty"`
	GenerateName               string      `json:"generateName,omitempty"`
	Namespace                  string      `json:"namespace,omitempty"`
	SelfLink                   string      `json:"selfLink,omitempty"`
	UID                        string      `json:"uid"`
	ResourceVersion            string      `json:"resourceVersion,omitempty"`
	Generation                 int64       `json:"generation,omitempty"`
	CreationTimestamp          string      `json:"creationTimestamp,omitempty"`
	DeletionTimestamp          string      `json:"deletionTimestamp,omitempty"`
	DeletionGracePeriodSeconds *int64      `json:"deletionGracePeriodSeconds,omitempty"`
	Labels                     []*KeyValue `json:"labels,omitempty"`
	Annotations                []*KeyValue `json:"annotations,omitempty"`
	OwnerReferences            string      `json:"ownerReferences,omitempty"`
	Finalizers                 string      `json:"finalizers,omitempty"`
	ClusterName                string      `json:"clusterName,omitempty"`
	ManagedFields              string      `json:"managedFields,omitempty"`
	ClusterID                  string      `json:"cluster_id"`
}

// Attribute is the shape shared by the model's `spec` and `status`: the raw JSON text of
// the object's top-level value, as a string.
type Attribute struct {
	ID        string `json:"id"`
	Attribute string `json:"attribute,omitempty"`
}

// UUID stands for the UUID type upstream uses for pattern_resource: 16 bytes that marshal
// as their canonical text through MarshalText, or null through a nil pointer.
type UUID [16]byte

func (u UUID) MarshalText() ([]byte, error) {
	const hex = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, b := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[b>>4], hex[b&15])
	}
	return out, nil
}

// KubernetesResource is the Object of every resource event, fields in wire order.
type KubernetesResource struct {
	ID                string                 `json:"id"`
	APIVersion        string                 `json:"apiVersion"`
	Kind              string                 `json:"kind"`
	Model             string                 `json:"model"`
	Metadata          ObjectMeta             `json:"metadata"`
	Spec              *Attribute             `json:"spec,omitempty"`
	Status            *Attribute             `json:"status,omitempty"`
	ClusterID         string                 `json:"cluster_id"`
	PatternResource   *UUID                  `json:"pattern_resource"`
	ComponentMetadata map[string]interface{} `json:"component_metadata"`
	Immutable         string                 `json:"immutable,omitempty"`
	Data              string                 `json:"data,omitempty"`
	BinaryData        string                 `json:"binaryData,omitempty"`
	StringData        string                 `json:"stringData,omitempty"`
	Type              string                 `json:"type,omitempty"`
}

// Request and Message stand for the broker envelope. The envelope's fields carry no JSON
// tags upstream, so its keys are the capitalised Go field names.
type Request struct {
	Entity  string
	Payload interface{}
}

type Message struct {
	ObjectType string
	EventType  string
	Request    *Request
	Object     interface{}
}
