// Package deploy_test checks the container and service files that cannot
// run here (no container engine, no cluster): every manifest parses, has
// the fields it needs, and agrees with the others and with Atrium's flags
// (through deploy/atrium.example.yaml, which cmd/atrium's tests keep equal
// to the real flag sets).
package deploy_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// Default ports: the proxy (--listen) and the admin server (--admin-listen).
const (
	proxyPort = "6433"
	adminPort = "9187"
)

func readYAMLDocs(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var docs []map[string]any
	for {
		var d map[string]any
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, path)
		if d != nil {
			docs = append(docs, d)
		}
	}
	return docs
}

// dig walks nested maps and lists: dig(m, "spec", "ports", 0, "port").
func dig(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			require.True(t, ok, "expected a mapping at %v in %v", k, path)
			v = m[k]
		case int:
			l, ok := v.([]any)
			require.True(t, ok, "expected a list at %d in %v", k, path)
			require.Greater(t, len(l), k)
			v = l[k]
		}
	}
	return v
}

// exampleKeys returns deploy/atrium.example.yaml's keys by command group
// ("serve", "catalog sync"...).
func exampleKeys(t *testing.T) map[string]map[string]any {
	t.Helper()
	var root map[string]any
	b, err := os.ReadFile("atrium.example.yaml")
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(b, &root))
	out := map[string]map[string]any{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok {
				walk(strings.TrimSpace(prefix+" "+k), sub)
				continue
			}
			if out[prefix] == nil {
				out[prefix] = map[string]any{}
			}
			out[prefix][k] = v
		}
	}
	walk("", root)
	return out
}

// allKeys is every key of every command.
func allKeys(groups map[string]map[string]any) map[string]bool {
	keys := map[string]bool{"config": true}
	for _, g := range groups {
		for k := range g {
			keys[k] = true
		}
	}
	return keys
}

// directEnv are variables Atrium reads itself rather than through a flag:
// secrets that must not appear on a command line.
var directEnv = map[string]bool{"ATRIUM_LLM_API_KEY": true}

// checkEnvNames fails for ATRIUM_* variables that set no known key, once
// serve's flags are in the example (before that, nothing to compare with).
func checkEnvNames(t *testing.T, where string, names []string) {
	t.Helper()
	groups := exampleKeys(t)
	if groups["serve"] == nil {
		t.Logf("%s: serve's flags are not in atrium.example.yaml yet; environment names not checked", where)
		return
	}
	keys := allKeys(groups)
	for _, n := range names {
		if !strings.HasPrefix(n, "ATRIUM_") || directEnv[n] {
			continue
		}
		key := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(n, "ATRIUM_"), "_", "-"))
		require.True(t, keys[key], "%s: %s sets no known key (%q)", where, n, key)
	}
}

func TestExampleDefaultsMatchPorts(t *testing.T) {
	serve := exampleKeys(t)["serve"]
	if serve == nil {
		t.Skip("serve's flags are not in atrium.example.yaml yet")
	}
	for key, port := range map[string]string{"listen": proxyPort, "admin-listen": adminPort} {
		v, ok := serve[key].(string)
		require.True(t, ok, "serve.%s missing from the example", key)
		_, p, err := net.SplitHostPort(v)
		require.NoError(t, err)
		require.Equal(t, port, p, "serve.%s default", key)
	}
}

func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	require.NoError(t, err)
	// Join continuation lines into instructions.
	var instrs []string
	var cur strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		cur.WriteString(line)
		instrs = append(instrs, cur.String())
		cur.Reset()
	}
	var froms, runs, users, exposes, envs, copies []string
	for _, in := range instrs {
		op, rest, _ := strings.Cut(in, " ")
		switch strings.ToUpper(op) {
		case "FROM":
			froms = append(froms, rest)
		case "RUN":
			runs = append(runs, rest)
		case "USER":
			users = append(users, rest)
		case "EXPOSE":
			exposes = append(exposes, strings.Fields(rest)...)
		case "ENV":
			envs = append(envs, rest)
		case "COPY":
			copies = append(copies, rest)
		}
	}
	require.Len(t, froms, 3, "node (ONNX Runtime), golang (build) and the runtime stage")
	require.Contains(t, froms[0], " AS onnxruntime")
	require.Contains(t, froms[1], " AS build")
	require.Contains(t, froms[2], "-slim")

	// The build stages run deploy/build.sh, the script validate.sh runs.
	joined := strings.Join(runs, "\n")
	require.Contains(t, joined, "deploy/build.sh onnxruntime ")
	require.Contains(t, joined, "deploy/build.sh binary ")

	require.NotEmpty(t, users)
	final := users[len(users)-1]
	require.NotContains(t, []string{"root", "0", "0:0"}, final, "the runtime must not run as root")

	require.ElementsMatch(t, []string{proxyPort, adminPort}, exposes)
	env := strings.Join(envs, " ")
	require.Contains(t, env, "ATRIUM_ADMIN_LISTEN=0.0.0.0:"+adminPort)
	require.Contains(t, env, "ATRIUM_LISTEN=0.0.0.0:"+proxyPort)
	require.Contains(t, env, "ATRIUM_ONNXRUNTIME_LIB=")
	require.Contains(t, strings.Join(copies, "\n"), "--from=onnxruntime")
	require.Contains(t, string(b), "/readyz")

	names := regexp.MustCompile(`ATRIUM_[A-Z0-9_]+`).FindAllString(env, -1)
	checkEnvNames(t, "Dockerfile", names)
}

func TestCompose(t *testing.T) {
	docs := readYAMLDocs(t, "compose.yaml")
	require.Len(t, docs, 1)
	c := docs[0]
	services, ok := c["services"].(map[string]any)
	require.True(t, ok, "compose.yaml needs services")
	for _, s := range []string{"postgres", "redis", "migrate", "atrium"} {
		require.Contains(t, services, s)
	}
	require.Contains(t, dig(t, services, "postgres", "image"), "pgvector")

	// Every long-running service has a healthcheck; one-shot ones do not
	// need one. Every dependency condition names a real service.
	for name, v := range services {
		svc := v.(map[string]any)
		if deps, ok := svc["depends_on"].(map[string]any); ok {
			for dep, cond := range deps {
				require.Contains(t, services, dep, "%s depends on unknown %s", name, dep)
				condition := dig(t, cond, "condition")
				require.Contains(t, []any{"service_healthy", "service_completed_successfully", "service_started"}, condition)
				if condition == "service_healthy" {
					require.Contains(t, services[dep], "healthcheck", "%s waits for %s to be healthy, which has no healthcheck", name, dep)
				}
			}
		}
	}
	for _, s := range []string{"postgres", "redis", "atrium"} {
		require.Contains(t, services[s], "healthcheck", s)
	}

	atrium := services["atrium"].(map[string]any)
	require.Contains(t, strings.Join(toStrings(dig(t, atrium, "healthcheck", "test")), " "), "/readyz")
	ports := strings.Join(toStrings(atrium["ports"]), " ")
	require.Contains(t, ports, ":"+proxyPort)
	require.Contains(t, ports, ":"+adminPort)
	env := atrium["environment"].(map[string]any)
	require.Equal(t, "0.0.0.0:"+adminPort, env["ATRIUM_ADMIN_LISTEN"])
	require.Equal(t, "0.0.0.0:"+proxyPort, env["ATRIUM_LISTEN"])
	require.Equal(t, "postgres:5432", env["ATRIUM_UPSTREAM"])
	var names []string
	for k := range env {
		names = append(names, k)
	}
	checkEnvNames(t, "compose.yaml", names)

	// Atrium starts only after the schema migration (directly or through
	// the catalog sync that needs it).
	require.True(t, dependsOn(services, "atrium", "migrate"), "atrium must wait for migrate")
	require.True(t, dependsOn(services, "atrium", "redis"))
}

func dependsOn(services map[string]any, from, to string) bool {
	seen := map[string]bool{}
	var walk func(s string) bool
	walk = func(s string) bool {
		if seen[s] {
			return false
		}
		seen[s] = true
		svc, _ := services[s].(map[string]any)
		deps, _ := svc["depends_on"].(map[string]any)
		for d := range deps {
			if d == to || walk(d) {
				return true
			}
		}
		return false
	}
	return walk(from)
}

func toStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func TestKubernetesManifests(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("k8s", "*.yaml"))
	require.NoError(t, err)
	byKind := map[string]map[string]any{}
	for _, f := range files {
		for _, d := range readYAMLDocs(t, f) {
			kind, _ := d["kind"].(string)
			require.NotEmpty(t, kind, f)
			require.NotEmpty(t, d["apiVersion"], f)
			if kind != "Kustomization" {
				require.NotEmpty(t, dig(t, d, "metadata", "name"), f)
			}
			byKind[kind] = d
		}
	}
	for _, k := range []string{"Deployment", "Service", "ConfigMap", "Secret", "PodDisruptionBudget", "HorizontalPodAutoscaler", "Kustomization"} {
		require.Contains(t, byKind, k)
	}

	// The kustomization lists every manifest.
	var listed []string
	for _, r := range byKind["Kustomization"]["resources"].([]any) {
		listed = append(listed, r.(string))
	}
	for _, f := range files {
		if filepath.Base(f) != "kustomization.yaml" {
			require.Contains(t, listed, filepath.Base(f))
		}
	}

	dep := byKind["Deployment"]
	name := dig(t, dep, "metadata", "name")
	labels := dig(t, dep, "spec", "selector", "matchLabels").(map[string]any)
	require.Equal(t, labels, dig(t, dep, "spec", "template", "metadata", "labels"))
	require.Equal(t, true, dig(t, dep, "spec", "template", "spec", "securityContext", "runAsNonRoot"))

	container := dig(t, dep, "spec", "template", "spec", "containers", 0).(map[string]any)
	portByName := map[string]int{}
	for _, p := range container["ports"].([]any) {
		pm := p.(map[string]any)
		portByName[pm["name"].(string)] = pm["containerPort"].(int)
	}
	require.Equal(t, map[string]int{"postgres": 6433, "admin": 9187}, portByName)
	for probe, path := range map[string]string{"readinessProbe": "/readyz", "livenessProbe": "/healthz"} {
		require.Equal(t, path, dig(t, container, probe, "httpGet", "path"), probe)
		require.Contains(t, portByName, dig(t, container, probe, "httpGet", "port"), probe)
	}

	// The Secret carries the LLM key and reaches the container.
	sec := byKind["Secret"]
	require.Contains(t, dig(t, sec, "stringData"), "ATRIUM_LLM_API_KEY")
	require.Equal(t, dig(t, sec, "metadata", "name"), dig(t, container, "envFrom", 0, "secretRef", "name"))
	var secretNames []string
	for k := range dig(t, sec, "stringData").(map[string]any) {
		secretNames = append(secretNames, k)
	}
	checkEnvNames(t, "k8s/secret.yaml", secretNames)

	// The ConfigMap's atrium.yaml parses, listens where the ports say, and
	// uses only known keys.
	cm := byKind["ConfigMap"]
	var cfg map[string]map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(dig(t, cm, "data", "atrium.yaml").(string)), &cfg))
	serve := cfg["serve"]
	require.NotNil(t, serve)
	require.Equal(t, "0.0.0.0:"+proxyPort, serve["listen"])
	require.Equal(t, "0.0.0.0:"+adminPort, serve["admin-listen"])
	if ex := exampleKeys(t)["serve"]; ex != nil {
		for k := range serve {
			require.Contains(t, ex, k, "k8s/configmap.yaml: serve has no key %q", k)
		}
	}

	// Service, PDB and HPA point at the Deployment's pods.
	svc := byKind["Service"]
	require.Equal(t, labels, dig(t, svc, "spec", "selector"))
	for _, p := range dig(t, svc, "spec", "ports").([]any) {
		require.Contains(t, portByName, p.(map[string]any)["targetPort"])
	}
	require.Equal(t, labels, dig(t, byKind["PodDisruptionBudget"], "spec", "selector", "matchLabels"))
	hpa := byKind["HorizontalPodAutoscaler"]
	require.Equal(t, "Deployment", dig(t, hpa, "spec", "scaleTargetRef", "kind"))
	require.Equal(t, name, dig(t, hpa, "spec", "scaleTargetRef", "name"))
	require.GreaterOrEqual(t, dig(t, hpa, "spec", "minReplicas").(int), 2, "one replica cannot survive a disruption")
}

func TestSystemdUnit(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("systemd", "atrium.service"))
	require.NoError(t, err)
	sections := map[string]map[string][]string{}
	var cur string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			cur = strings.Trim(line, "[]")
			sections[cur] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			require.True(t, ok, "bad line %q", line)
			sections[cur][k] = append(sections[cur][k], v)
		}
	}
	svc := sections["Service"]
	require.NotNil(t, svc)
	require.Equal(t, []string{"/usr/local/bin/atrium serve"}, svc["ExecStart"])
	require.Contains(t, svc["ExecReload"][0], "-HUP")
	require.Equal(t, []string{"atrium"}, svc["User"])
	require.Contains(t, sections["Install"]["WantedBy"], "multi-user.target")
	var names []string
	for _, e := range svc["Environment"] {
		n, _, _ := strings.Cut(e, "=")
		names = append(names, n)
	}
	checkEnvNames(t, "systemd/atrium.service", names)
}
