package deploy

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/claimcheck/claimcheck/pkg/config"
	"github.com/claimcheck/claimcheck/pkg/daemon"
	"github.com/claimcheck/claimcheck/pkg/stream"
)

// services are claimcheck's four service binaries.
var services = []string{"ingest", "verifier", "gatekeeper", "rotator"}

// sharedConfig is claimcheck.yaml as it appears in the ConfigMap
// claimcheck-config, decoded (nil when it is missing or does not parse).
func sharedConfig(o *objects) (map[string]any, string, error) {
	cm, err := o.configMap("claimcheck-config")
	if err != nil {
		return nil, "", err
	}
	raw, ok := cm.Data["claimcheck.yaml"]
	if !ok {
		return nil, "", fmt.Errorf("ConfigMap %s: no claimcheck.yaml", cm.Name)
	}
	var m map[string]any
	if err := yaml.Unmarshal([]byte(raw), &m); err != nil {
		return nil, "", fmt.Errorf("claimcheck.yaml: %w", err)
	}
	return m, raw, nil
}

// checkConfig: claimcheck.yaml holds only keys claimcheck knows (pkg/daemon
// TopLevelKeys; the services' Config fields), passes pkg/config's strict
// decoding of the shared sections and their validation, and agrees with
// the manifests: its http_listen is the probes' port on every interface,
// nats.url is the NATS Service, every service reads it where it is mounted.
func checkConfig(o *objects, f *facts, p *problems) {
	m, raw, err := sharedConfig(o)
	if err != nil {
		p.addf("%w", err)
		return
	}
	for k := range m {
		if !daemon.TopLevelKeys[k] {
			p.addf("claimcheck.yaml: unknown key %q (pkg/daemon TopLevelKeys)", k)
		}
	}
	for _, svc := range services {
		sec, _ := m[svc].(map[string]any)
		for k := range sec {
			if !f.serviceKeys[svc][k] {
				p.addf("claimcheck.yaml: unknown key %s.%s (services/%s Config)", svc, k, svc)
			}
		}
	}
	common, err := decodeCommon(raw, f.scratch)
	if err != nil {
		p.addf("claimcheck.yaml: %w", err)
		return
	}
	host, port, err := net.SplitHostPort(common.HTTPListen)
	if err != nil || host != "0.0.0.0" {
		p.addf("claimcheck.yaml: http_listen %q, want 0.0.0.0:<port> (the kubelet probes it)", common.HTTPListen)
	}
	gkListen, _ := m["gatekeeper"].(map[string]any)["http_listen"].(string)
	_, gkPort, _ := net.SplitHostPort(gkListen)
	for _, w := range o.podTemplates() {
		for _, c := range w.tpl.Spec.Containers {
			name, _, ok := claimcheckImage(c.Image)
			if !ok {
				continue
			}
			if cfg := argValue(c.Args, "--config"); cfg == "" || configMapOf(&w.tpl.Spec, &c, cfg) != "claimcheck-config" {
				p.addf("%s container %s: --config %q is not claimcheck.yaml from the ConfigMap claimcheck-config", w, c.Name, cfg)
			}
			if w.kind == "Job" {
				continue
			}
			if strconv.Itoa(int(namedPort(c.Ports, "http"))) != port {
				p.addf("%s container %s: port http is not http_listen's %s", w, c.Name, port)
			}
			if name == "gatekeeper" && strconv.Itoa(int(namedPort(c.Ports, "hook"))) != gkPort {
				p.addf("%s container %s: port hook is not gatekeeper.http_listen's %q", w, c.Name, gkListen)
			}
		}
	}
	checkNATSURL(o, common.NATS.URL, p)
	checkKeyAndArchiveDirs(o, m, p)
}

// decodeCommon reads claimcheck.yaml as a service binary does (pkg/config:
// defaults, the file; unknown keys fail) and validates the streams.
func decodeCommon(raw, scratch string) (daemon.Common, error) {
	file := filepath.Join(scratch, "claimcheck.yaml")
	if err := os.WriteFile(file, []byte(raw), 0o600); err != nil {
		return daemon.Common{}, err
	}
	v := config.New()
	common := daemon.DefaultCommon()
	if err := config.SetDefaults(v, "", common); err != nil {
		return common, err
	}
	if err := config.ReadFile(v, file); err != nil {
		return common, err
	}
	for key, out := range map[string]any{"nats": &common.NATS, "log": &common.Log, "streams": &common.Streams} {
		if err := config.Decode(v, key, out); err != nil {
			return common, fmt.Errorf("%s: %w", key, err)
		}
	}
	common.HTTPListen = v.GetString("http_listen")
	return common, common.Streams.Validate()
}

// maxMsgSize is claimcheck.yaml's streams.max_msg_size (its default when
// unset).
func maxMsgSize(o *objects) int64 {
	n := int64(stream.DefaultOptions().MaxMsgSize)
	if m, _, err := sharedConfig(o); err == nil {
		if s, ok := m["streams"].(map[string]any); ok {
			if v, ok := s["max_msg_size"].(float64); ok {
				n = int64(v)
			}
		}
	}
	return n
}

func checkNATSURL(o *objects, raw string, p *problems) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "nats" {
		p.addf("claimcheck.yaml: nats.url %q, want nats://<Service>:<port>", raw)
		return
	}
	for _, s := range o.services {
		if s.Name != u.Hostname() {
			continue
		}
		for _, sp := range s.Spec.Ports {
			if strconv.Itoa(int(sp.Port)) == u.Port() && labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(o.statefulSets[0].Spec.Template.Labels)) {
				return
			}
		}
	}
	p.addf("claimcheck.yaml: nats.url %s is not a Service port of the NATS pods", raw)
}

// checkKeyAndArchiveDirs: the verifier, the gatekeeper and the rotator use
// one key directory, on the keys volume (the rotator's writable, the
// others' read-only), and the rotator's file:// archive is on a writable
// volume of its own.
func checkKeyAndArchiveDirs(o *objects, m map[string]any, p *problems) {
	var keyDir string
	for _, svc := range []string{"verifier", "gatekeeper", "rotator"} {
		sec, _ := m[svc].(map[string]any)
		dir, _ := sec["key_dir"].(string)
		if keyDir == "" {
			keyDir = dir
		}
		if dir == "" || dir != keyDir {
			p.addf("claimcheck.yaml: %s.key_dir %q: want one key directory for the verifier, gatekeeper and rotator", svc, dir)
			continue
		}
		w, c := o.container(svc)
		if c == nil {
			p.addf("no Deployment %s", svc)
			continue
		}
		vol, mnt := mountOf(&w.tpl.Spec, c, dir)
		if vol == nil || vol.PersistentVolumeClaim == nil || mnt.ReadOnly != (svc != "rotator") {
			p.addf("%s: key_dir %s must be on a PersistentVolumeClaim, writable by the rotator alone", w, dir)
		}
	}
	rot, _ := m["rotator"].(map[string]any)
	archive, _ := rot["archive_url"].(string)
	if u, err := url.Parse(archive); err == nil && u.Scheme == "file" {
		w, c := o.container("rotator")
		if c != nil {
			if vol, mnt := mountOf(&w.tpl.Spec, c, u.Path); vol == nil || vol.PersistentVolumeClaim == nil || mnt.ReadOnly {
				p.addf("%s: rotator.archive_url %s is not on a writable PersistentVolumeClaim", w, archive)
			}
		}
	}
}

// container finds the Deployment named name and its container of that name.
func (o *objects) container(name string) (podTemplate, *corev1.Container) {
	for _, w := range o.podTemplates() {
		if w.kind != "Deployment" || w.name != name {
			continue
		}
		for i := range w.tpl.Spec.Containers {
			if w.tpl.Spec.Containers[i].Name == name {
				return w, &w.tpl.Spec.Containers[i]
			}
		}
	}
	return podTemplate{}, nil
}

// argValue is the value of --flag in args (--flag=v or --flag v).
func argValue(args []string, flag string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// mountOf is the volume and mount holding file in container c.
func mountOf(spec *corev1.PodSpec, c *corev1.Container, file string) (*corev1.Volume, *corev1.VolumeMount) {
	var best *corev1.VolumeMount
	for i := range c.VolumeMounts {
		m := &c.VolumeMounts[i]
		if (file == m.MountPath || strings.HasPrefix(file, strings.TrimSuffix(m.MountPath, "/")+"/")) &&
			(best == nil || len(m.MountPath) > len(best.MountPath)) {
			best = m
		}
	}
	if best == nil {
		return nil, nil
	}
	for i := range spec.Volumes {
		if spec.Volumes[i].Name == best.Name {
			return &spec.Volumes[i], best
		}
	}
	return nil, best
}

// configMapOf names the generated ConfigMap (without its hash) file is
// mounted from.
func configMapOf(spec *corev1.PodSpec, c *corev1.Container, file string) string {
	vol, _ := mountOf(spec, c, file)
	if vol == nil || vol.ConfigMap == nil {
		return ""
	}
	name := vol.ConfigMap.Name
	if i := strings.LastIndex(name, "-"); i > 0 {
		name = name[:i]
	}
	if path.Base(file) != "claimcheck.yaml" {
		return ""
	}
	return name
}

func namedPort(ports []corev1.ContainerPort, name string) int32 {
	for _, cp := range ports {
		if cp.Name == name {
			return cp.ContainerPort
		}
	}
	return 0
}

func metavSelector(s *metav1.LabelSelector) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(s)
}
