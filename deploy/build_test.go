package deploy

import (
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// objects is one kustomize build, each object decoded strictly into its
// Kubernetes API type.
type objects struct {
	names           []objectName
	namespaces      []corev1.Namespace
	configMaps      []corev1.ConfigMap
	services        []corev1.Service
	pvcs            []corev1.PersistentVolumeClaim
	deployments     []appsv1.Deployment
	statefulSets    []appsv1.StatefulSet
	jobs            []batchv1.Job
	hpas            []autoscalingv2.HorizontalPodAutoscaler
	pdbs            []policyv1.PodDisruptionBudget
	networkPolicies []networkingv1.NetworkPolicy
	scaledObjects   []scaledObject
	podMonitors     []podMonitor
}

// objectName is an object's kind, name and namespace.
type objectName struct{ kind, name, namespace string }

// scaledObject mirrors the fields of KEDA's ScaledObject (keda.sh/v1alpha1)
// the manifests use; decoding is strict, so any other field fails.
type scaledObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		ScaleTargetRef struct {
			Name string `json:"name"`
		} `json:"scaleTargetRef"`
		MinReplicaCount *int32 `json:"minReplicaCount"`
		MaxReplicaCount *int32 `json:"maxReplicaCount"`
		PollingInterval *int32 `json:"pollingInterval"`
		CooldownPeriod  *int32 `json:"cooldownPeriod"`
		Triggers        []struct {
			Type       string            `json:"type"`
			MetricType string            `json:"metricType"`
			Metadata   map[string]string `json:"metadata"`
		} `json:"triggers"`
	} `json:"spec"`
}

// podMonitor mirrors the fields of the Prometheus Operator's PodMonitor
// (monitoring.coreos.com/v1) the manifests use.
type podMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector            metav1.LabelSelector `json:"selector"`
		PodMetricsEndpoints []struct {
			Port     string `json:"port"`
			Path     string `json:"path"`
			Interval string `json:"interval"`
		} `json:"podMetricsEndpoints"`
	} `json:"spec"`
}

// build runs kustomize on dir as `kustomize build` does and decodes every
// object strictly: an unknown field, a wrongly typed value or a kind the
// manifests are not expected to hold is an error.
func build(dir string) (*objects, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	var o objects
	for _, r := range m.Resources() {
		raw, err := r.AsYAML()
		if err != nil {
			return nil, err
		}
		gvk := r.GetApiVersion() + " " + r.GetKind()
		o.names = append(o.names, objectName{r.GetKind(), r.GetName(), r.GetNamespace()})
		var dst any
		switch gvk {
		case "v1 Namespace":
			dst = appendNew(&o.namespaces)
		case "v1 ConfigMap":
			dst = appendNew(&o.configMaps)
		case "v1 Service":
			dst = appendNew(&o.services)
		case "v1 PersistentVolumeClaim":
			dst = appendNew(&o.pvcs)
		case "apps/v1 Deployment":
			dst = appendNew(&o.deployments)
		case "apps/v1 StatefulSet":
			dst = appendNew(&o.statefulSets)
		case "batch/v1 Job":
			dst = appendNew(&o.jobs)
		case "autoscaling/v2 HorizontalPodAutoscaler":
			dst = appendNew(&o.hpas)
		case "policy/v1 PodDisruptionBudget":
			dst = appendNew(&o.pdbs)
		case "networking.k8s.io/v1 NetworkPolicy":
			dst = appendNew(&o.networkPolicies)
		case "keda.sh/v1alpha1 ScaledObject":
			dst = appendNew(&o.scaledObjects)
		case "monitoring.coreos.com/v1 PodMonitor":
			dst = appendNew(&o.podMonitors)
		default:
			return nil, fmt.Errorf("%s %s: a kind the checks do not know", gvk, r.GetName())
		}
		if err := decodeStrict(raw, dst); err != nil {
			return nil, fmt.Errorf("%s %s: %w", gvk, r.GetName(), err)
		}
	}
	return &o, nil
}

// decodeStrict decodes a YAML object as the API server would in strict
// field validation: duplicate keys, unknown fields (case-sensitively, unlike
// encoding/json) and wrongly typed values are errors.
func decodeStrict(raw []byte, dst any) error {
	j, err := yaml.YAMLToJSONStrict(raw)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(j, dst, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

// appendNew appends a zero element to *s and returns a pointer to it.
func appendNew[T any](s *[]T) *T {
	var zero T
	*s = append(*s, zero)
	return &(*s)[len(*s)-1]
}

// podTemplate is a workload's pod template, with what the checks need to
// say which it is.
type podTemplate struct {
	kind, name string
	tpl        *corev1.PodTemplateSpec
	// claims are a StatefulSet's volume claim templates (mountable by name).
	claims []corev1.PersistentVolumeClaim
}

func (p podTemplate) String() string { return p.kind + " " + p.name }

func (o *objects) podTemplates() []podTemplate {
	var out []podTemplate
	for i := range o.deployments {
		d := &o.deployments[i]
		out = append(out, podTemplate{kind: "Deployment", name: d.Name, tpl: &d.Spec.Template})
	}
	for i := range o.statefulSets {
		s := &o.statefulSets[i]
		out = append(out, podTemplate{kind: "StatefulSet", name: s.Name, tpl: &s.Spec.Template, claims: s.Spec.VolumeClaimTemplates})
	}
	for i := range o.jobs {
		j := &o.jobs[i]
		out = append(out, podTemplate{kind: "Job", name: j.Name, tpl: &j.Spec.Template})
	}
	return out
}

func (o *objects) configMap(prefix string) (*corev1.ConfigMap, error) {
	var found *corev1.ConfigMap
	for i := range o.configMaps {
		c := &o.configMaps[i]
		// kustomize's generators add a hash: <name>-<hash>.
		hash, ok := strings.CutPrefix(c.Name, prefix+"-")
		if c.Name == prefix || ok && hash != "" && !strings.Contains(hash, "-") {
			if found != nil {
				return nil, fmt.Errorf("two ConfigMaps named %s: %s and %s", prefix, found.Name, c.Name)
			}
			found = c
		}
	}
	if found == nil {
		return nil, fmt.Errorf("no ConfigMap %s", prefix)
	}
	return found, nil
}

func (o *objects) configMapByName(name string) *corev1.ConfigMap {
	for i := range o.configMaps {
		if o.configMaps[i].Name == name {
			return &o.configMaps[i]
		}
	}
	return nil
}
