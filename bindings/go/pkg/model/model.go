// Package model holds the Go values the embedded engine puts in a broker.Message's Object:
// the canonical KubernetesResource with the JSON keys of upstream's
// github.com/meshery/meshsync/pkg/model (that module is not served by the module proxy
// here, so these are structs with identical JSON tags; Meshery Server decodes the Object
// into its own copy of upstream's type, and the JSON form is what both agree on).
package model

// KubernetesResource is one Kubernetes object in Meshery's canonical shape.
type KubernetesResource struct {
	ID                     string                        `json:"id"`
	APIVersion             string                        `json:"apiVersion"`
	Kind                   string                        `json:"kind"`
	Model                  string                        `json:"model"`
	KubernetesResourceMeta *KubernetesResourceObjectMeta `json:"metadata"`
	Spec                   *KubernetesResourceSpec       `json:"spec,omitempty"`
	Status                 *KubernetesResourceStatus     `json:"status,omitempty"`
	ClusterID              string                        `json:"cluster_id"`
	PatternResource        *string                       `json:"pattern_resource"`
	ComponentMetadata      map[string]interface{}        `json:"component_metadata"`
	Immutable              string                        `json:"immutable,omitempty"`
	Data                   string                        `json:"data,omitempty"`
	BinaryData             string                        `json:"binaryData,omitempty"`
	StringData             string                        `json:"stringData,omitempty"`
	Type                   string                        `json:"type,omitempty"`
}

// KubernetesResourceObjectMeta is the metadata of a KubernetesResource.
type KubernetesResourceObjectMeta struct {
	ID                         string                `json:"id"`
	Name                       string                `json:"name,omitempty"`
	GenerateName               string                `json:"generateName,omitempty"`
	Namespace                  string                `json:"namespace,omitempty"`
	SelfLink                   string                `json:"selfLink,omitempty"`
	UID                        string                `json:"uid"`
	ResourceVersion            string                `json:"resourceVersion,omitempty"`
	Generation                 int64                 `json:"generation,omitempty"`
	CreationTimestamp          string                `json:"creationTimestamp,omitempty"`
	DeletionTimestamp          string                `json:"deletionTimestamp,omitempty"`
	DeletionGracePeriodSeconds *int64                `json:"deletionGracePeriodSeconds,omitempty"`
	Labels                     []*KubernetesKeyValue `json:"labels,omitempty"`
	Annotations                []*KubernetesKeyValue `json:"annotations,omitempty"`
	OwnerReferences            string                `json:"ownerReferences,omitempty"`
	Finalizers                 string                `json:"finalizers,omitempty"`
	ClusterName                string                `json:"clusterName,omitempty"`
	ManagedFields              string                `json:"managedFields,omitempty"`
	ClusterID                  string                `json:"cluster_id"`
}

// KubernetesKeyValue is one label or annotation.
type KubernetesKeyValue struct {
	ID       string `json:"id"`
	UniqueID string `json:"unique_id"`
	Kind     string `json:"kind"`
	Key      string `json:"key,omitempty"`
	Value    string `json:"value,omitempty"`
}

// KubernetesResourceSpec holds the object's spec as JSON text.
type KubernetesResourceSpec struct {
	ID        string `json:"id"`
	Attribute string `json:"attribute,omitempty"`
}

// KubernetesResourceStatus holds the object's status as JSON text.
type KubernetesResourceStatus struct {
	ID        string `json:"id"`
	Attribute string `json:"attribute,omitempty"`
}

// Kinds of KubernetesKeyValue.
const (
	KindLabel      = "label"
	KindAnnotation = "annotation"
)

// LogObject is one chunk of a log stream, the Object of a log-stream message on
// meshery.meshsync.logs: upstream's model.LogObject, with its JSON keys.
type LogObject struct {
	ID        string `json:"id,omitempty"`
	Data      string `json:"data,omitempty"`
	Primary   string `json:"primary,omitempty"`
	Secondary string `json:"secondary,omitempty"`
}
