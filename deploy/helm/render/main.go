// Command render is an offline, strict `helm template` for the Murmur chart: the template
// engine Helm uses (Go's text/template with sprig) plus the subset of Helm's built-ins the
// chart needs — include, tpl, required, toYaml, fromYaml, fromJson, lookup (empty, as in
// `helm template`), .Values, .Chart, .Release, .Files.Get, .Template and .Capabilities.KubeVersion.
//
// NOTES.txt is rendered too (a failure there fails `helm install`) but not printed.
//
// Stricter than Helm: a reference to a value that is not there fails the render
// (missingkey=error, what `helm lint --strict` does), so does "<no value>" in the output (a
// null value printed), a file .Files.Get cannot find, and a rendered document that is not YAML.
//
// Usage:
//
//	render -chart deploy/helm/murmur [-f values-production.yaml]… [-name murmur] [-namespace murmur] [-upgrade]
//	render -chart deploy/helm/murmur -f … -dump-values      # the merged values as JSON, for values.schema.json
//	render … -key-cache DIR      # certificates signed with cached keys (key-cache.go): the offline checks' fast path
//
// Built offline from Debian's Go packages (golang-go, golang-github-masterminds-sprig-dev,
// golang-gopkg-yaml.v3-dev) by deploy/helm/check.js.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"gopkg.in/yaml.v3"
)

type valueFiles []string

func (v *valueFiles) String() string     { return strings.Join(*v, ",") }
func (v *valueFiles) Set(s string) error { *v = append(*v, s); return nil }

// Chart mirrors the fields of Chart.yaml that templates read as .Chart.*.
type Chart struct {
	APIVersion  string `yaml:"apiVersion"`
	Name        string `yaml:"name"`
	Version     string `yaml:"version"`
	AppVersion  string `yaml:"appVersion"`
	Description string `yaml:"description"`
	Type        string `yaml:"type"`
	KubeVersion string `yaml:"kubeVersion"`
}

// Release is .Release as `helm template` sets it.
type Release struct {
	Name      string
	Namespace string
	Service   string
	IsInstall bool
	IsUpgrade bool
	Revision  int
}

// Files is .Files: the chart's non-template files, by path relative to the chart.
type Files struct{ root string }

// Get returns a file's content; unlike Helm, a missing file is an error, not "".
func (f Files) Get(name string) (string, error) {
	clean := path.Clean("/" + name)[1:]
	b, err := os.ReadFile(filepath.Join(f.root, filepath.FromSlash(clean)))
	if err != nil {
		return "", fmt.Errorf(".Files.Get %q: %w", name, err)
	}
	return string(b), nil
}

// KubeVersion is .Capabilities.KubeVersion.
type KubeVersion struct{ Version, Major, Minor string }

// Capabilities is .Capabilities (the cluster `helm template` assumes).
type Capabilities struct{ KubeVersion KubeVersion }

// TemplateInfo is .Template.
type TemplateInfo struct{ Name, BasePath string }

func main() {
	var files valueFiles
	chartDir := flag.String("chart", "", "chart directory")
	flag.Var(&files, "f", "values file (repeatable; later files win)")
	name := flag.String("name", "murmur", "release name")
	namespace := flag.String("namespace", "default", "release namespace")
	upgrade := flag.Bool("upgrade", false, "render as an upgrade (.Release.IsUpgrade)")
	kube := flag.String("kube-version", "1.30.0", "Kubernetes version for .Capabilities")
	dump := flag.Bool("dump-values", false, "print the merged values as JSON and exit")
	keyCache := flag.String("key-cache", "", "sign generated certificates with keys cached in this folder (offline checks; see key-cache.go)")
	flag.Parse()
	if *chartDir == "" {
		fail(errors.New("-chart is required"))
	}
	values, err := loadValues(*chartDir, files)
	if err != nil {
		fail(err)
	}
	if *dump {
		out, err := json.MarshalIndent(values, "", "  ")
		if err != nil {
			fail(err)
		}
		fmt.Println(string(out))
		return
	}
	out, err := render(*chartDir, values, Release{Name: *name, Namespace: *namespace, Service: "Helm", IsInstall: !*upgrade, IsUpgrade: *upgrade, Revision: 1}, *kube, *keyCache)
	if err != nil {
		fail(err)
	}
	os.Stdout.WriteString(out)
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "render: %v\n", err)
	os.Exit(1)
}

func readYAMLMap(file string) (map[string]interface{}, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	m := map[string]interface{}{}
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if m == nil {
		m = map[string]interface{}{}
	}
	return m, nil
}

// loadValues is the chart's values.yaml with each -f file merged over it the way Helm
// coalesces: maps merge key by key, anything else replaces, and null deletes the key.
func loadValues(chartDir string, files []string) (map[string]interface{}, error) {
	values, err := readYAMLMap(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		over, err := readYAMLMap(f)
		if err != nil {
			return nil, err
		}
		merge(values, over)
	}
	return values, nil
}

func merge(dst, src map[string]interface{}) {
	for k, v := range src {
		if v == nil {
			delete(dst, k)
			continue
		}
		if sm, ok := v.(map[string]interface{}); ok {
			if dm, ok := dst[k].(map[string]interface{}); ok {
				merge(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

func toYAML(v interface{}) (string, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

func fromYAML(s string) (map[string]interface{}, error) {
	m := map[string]interface{}{}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("fromYaml: %w", err)
	}
	return m, nil
}

func fromJSON(s string) (map[string]interface{}, error) {
	m := map[string]interface{}{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("fromJson: %w", err)
	}
	return m, nil
}

// required fails the render with msg when val is absent or an empty string, as Helm's does.
func required(msg string, val interface{}) (interface{}, error) {
	if val == nil {
		return nil, errors.New(msg)
	}
	if s, ok := val.(string); ok && s == "" {
		return nil, errors.New(msg)
	}
	return val, nil
}

const maxIncludeDepth = 1000

func render(chartDir string, values map[string]interface{}, release Release, kube string, keyCache string) (string, error) {
	var chart Chart
	cb, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		return "", err
	}
	if err := yaml.Unmarshal(cb, &chart); err != nil {
		return "", fmt.Errorf("Chart.yaml: %w", err)
	}
	if chart.Name == "" || chart.Version == "" || chart.APIVersion != "v2" {
		return "", errors.New("Chart.yaml needs apiVersion v2, name and version")
	}
	parts := strings.SplitN(strings.TrimPrefix(kube, "v"), ".", 3)
	if len(parts) < 2 {
		return "", fmt.Errorf("bad -kube-version %q", kube)
	}
	top := map[string]interface{}{
		"Values":       values,
		"Chart":        chart,
		"Release":      release,
		"Files":        Files{root: chartDir},
		"Capabilities": Capabilities{KubeVersion: KubeVersion{Version: "v" + strings.TrimPrefix(kube, "v"), Major: parts[0], Minor: parts[1]}},
		"Template":     TemplateInfo{BasePath: chart.Name + "/templates"},
	}

	var root *template.Template
	depth := map[string]int{}
	funcs := sprig.TxtFuncMap()
	// Helm removes these: a chart must not read the renderer's environment.
	delete(funcs, "env")
	delete(funcs, "expandenv")
	if keyCache != "" {
		withCachedKeys(funcs, keyCache)
	}
	funcs["toYaml"] = toYAML
	funcs["fromYaml"] = fromYAML
	funcs["fromJson"] = fromJSON
	funcs["required"] = required
	funcs["lookup"] = func(apiVersion, kind, namespace, name string) (map[string]interface{}, error) {
		return map[string]interface{}{}, nil
	}
	funcs["include"] = func(name string, data interface{}) (string, error) {
		if depth[name]++; depth[name] > maxIncludeDepth {
			return "", fmt.Errorf("include %q: recursion deeper than %d", name, maxIncludeDepth)
		}
		defer func() { depth[name]-- }()
		var buf bytes.Buffer
		if err := root.ExecuteTemplate(&buf, name, data); err != nil {
			return "", err
		}
		return buf.String(), nil
	}
	funcs["tpl"] = func(text string, data interface{}) (string, error) {
		t, err := root.Clone()
		if err != nil {
			return "", err
		}
		t, err = t.New("tpl").Option("missingkey=error").Parse(text)
		if err != nil {
			return "", fmt.Errorf("tpl: %w", err)
		}
		var buf bytes.Buffer
		if err := t.Execute(&buf, data); err != nil {
			return "", fmt.Errorf("tpl: %w", err)
		}
		return buf.String(), nil
	}
	root = template.New(chart.Name).Funcs(funcs).Option("missingkey=error")

	tdir := filepath.Join(chartDir, "templates")
	entries, err := os.ReadDir(tdir)
	if err != nil {
		return "", err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			return "", fmt.Errorf("templates/%s: subfolders are not supported by this renderer", e.Name())
		}
		n := e.Name()
		if !strings.HasSuffix(n, ".yaml") && !strings.HasSuffix(n, ".tpl") && n != "NOTES.txt" {
			return "", fmt.Errorf("templates/%s: only .yaml and .tpl templates are supported", n)
		}
		b, err := os.ReadFile(filepath.Join(tdir, n))
		if err != nil {
			return "", err
		}
		full := chart.Name + "/templates/" + n
		if _, err := root.New(full).Parse(string(b)); err != nil {
			return "", err
		}
		if !strings.HasPrefix(n, "_") && n != "NOTES.txt" {
			names = append(names, full)
		}
	}
	sort.Strings(names)

	var docs []doc
	for _, n := range names {
		top["Template"] = TemplateInfo{Name: n, BasePath: chart.Name + "/templates"}
		var buf bytes.Buffer
		if err := root.ExecuteTemplate(&buf, n, top); err != nil {
			return "", err
		}
		out := buf.String()
		if i := strings.Index(out, "<no value>"); i >= 0 {
			line := strings.Count(out[:i], "\n") + 1
			return "", fmt.Errorf("%s: output line %d prints a missing or null value (<no value>)", n, line)
		}
		for i, text := range splitDocs(out) {
			if strings.TrimSpace(stripComments(text)) == "" {
				continue
			}
			var meta struct {
				Kind     string `yaml:"kind"`
				Metadata struct {
					Annotations map[string]string `yaml:"annotations"`
				} `yaml:"metadata"`
			}
			if err := yaml.Unmarshal([]byte(text), &meta); err != nil {
				return "", fmt.Errorf("%s: document %d is not valid YAML: %v\n%s", n, i+1, err, numbered(text))
			}
			w, _ := strconv.Atoi(meta.Metadata.Annotations["helm.sh/hook-weight"])
			docs = append(docs, doc{source: n, text: strings.TrimSpace(text), kind: meta.Kind, hook: meta.Metadata.Annotations["helm.sh/hook"] != "", weight: w})
		}
	}
	// NOTES.txt is printed by `helm install`, never applied, but a failure there fails the
	// install all the same: render it, strictly, and keep the text out of the manifests.
	notes := chart.Name + "/templates/NOTES.txt"
	if root.Lookup(notes) != nil {
		top["Template"] = TemplateInfo{Name: notes, BasePath: chart.Name + "/templates"}
		var buf bytes.Buffer
		if err := root.ExecuteTemplate(&buf, notes, top); err != nil {
			return "", err
		}
		if strings.Contains(buf.String(), "<no value>") {
			return "", fmt.Errorf("%s: prints a missing or null value (<no value>)", notes)
		}
	}
	// Helm's install order for manifests; hooks (run around them) after, by weight.
	sort.SliceStable(docs, func(i, j int) bool {
		a, b := docs[i], docs[j]
		if a.hook != b.hook {
			return !a.hook
		}
		if a.hook {
			return a.weight < b.weight
		}
		return kindRank(a.kind) < kindRank(b.kind)
	})
	var sb strings.Builder
	for _, d := range docs {
		fmt.Fprintf(&sb, "---\n# Source: %s\n%s\n", d.source, d.text)
	}
	return sb.String(), nil
}

type doc struct {
	source, text, kind string
	hook               bool
	weight             int
}

var docSep = regexp.MustCompile(`(?m)^---[ \t]*$`)

func splitDocs(s string) []string { return docSep.Split(s, -1) }

func stripComments(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func numbered(s string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = fmt.Sprintf("%4d | %s", i+1, lines[i])
	}
	return strings.Join(lines, "\n")
}

// installOrder is Helm's (pkg/releaseutil/kind_sorter.go), shortened to the kinds a chart like
// this one uses; anything else goes last.
var installOrder = []string{
	"Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy",
	"PodDisruptionBudget", "ServiceAccount", "Secret", "SecretList", "ConfigMap", "StorageClass",
	"PersistentVolume", "PersistentVolumeClaim", "CustomResourceDefinition", "ClusterRole",
	"ClusterRoleList", "ClusterRoleBinding", "ClusterRoleBindingList", "Role", "RoleList",
	"RoleBinding", "RoleBindingList", "Service", "DaemonSet", "Pod", "ReplicationController",
	"ReplicaSet", "Deployment", "HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob",
	"IngressClass", "Ingress", "APIService",
}

func kindRank(kind string) int {
	for i, k := range installOrder {
		if k == kind {
			return i
		}
	}
	return len(installOrder)
}
