package main

// Configuration precedence, the same for every subcommand:
//
//	command-line flags > environment (ATRIUM_*) > configuration file > defaults
//
// Each subcommand declares plain flags on its own flag.FlagSet. After parsing,
// applySettings fills every flag the command line did not set from the
// environment (ATRIUM_ + the flag name upper-cased with '-' → '_') or from the
// YAML file named by --config (or ATRIUM_CONFIG). Values go through fs.Set, so
// a bad value fails at start-up exactly as a bad flag would, naming the key
// and where it came from.
//
// The file's keys are flag names. Top-level keys apply to every subcommand
// that has the flag; a mapping under a subcommand's name ("serve:", or
// "catalog:" → "sync:") applies to that subcommand only and wins over the
// levels above it:
//
//	upstream: db.internal:5432
//	serve:
//	  listen: 0.0.0.0:6433
//	catalog:
//	  sync:
//	    schemas: "public,sales*"

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

const (
	// configFlagName is the flag (and ATRIUM_CONFIG) naming the file.
	configFlagName = "config"
	// envPrefix starts every environment variable Atrium reads for a flag.
	envPrefix = "ATRIUM_"
	// maskedValue replaces a secret in printed configuration and errors.
	maskedValue = "****"
)

// source says where a setting's value came from, in increasing precedence.
type source int

const (
	sourceDefault source = iota
	sourceFile
	sourceEnv
	sourceFlag
)

func (s source) String() string {
	switch s {
	case sourceFile:
		return "file"
	case sourceEnv:
		return "env"
	case sourceFlag:
		return "flag"
	default:
		return "default"
	}
}

// setting is the resolved value of one flag.
type setting struct {
	name  string
	value string // the flag's Value.String() after resolution
	from  source
	// origin details the source: "--listen", "ATRIUM_LISTEN",
	// "atrium.yaml:12", or "" for a default.
	origin string
	usage  string
}

// settings is the resolved configuration of one subcommand's FlagSet.
type settings struct {
	command  string
	file     string // configuration file path; "" when none
	values   []setting
	explicit map[string]bool // set on the command line
	fs       *flag.FlagSet
	getenv   func(string) string
}

// envName is the environment variable that sets the flag name.
func envName(name string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// parseFlags is what a subcommand calls instead of fs.Parse: it adds the
// --config flag when the command has none, parses args, and applies the
// environment and the configuration file. flag.ErrHelp passes through.
func parseFlags(ctx context.Context, env *cliEnv, fs *flag.FlagSet, args []string) (*settings, error) {
	addConfigFlag(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return applySettings(ctx, env, fs)
}

// addConfigFlag declares --config on fs unless it already exists. Call it
// before fs.Parse when parsing without parseFlags.
func addConfigFlag(fs *flag.FlagSet) {
	if fs.Lookup(configFlagName) == nil {
		fs.String(configFlagName, "", "YAML configuration `file` (keys are flag names; also ATRIUM_CONFIG)")
	}
}

// applySettings fills the flags of the already parsed fs that the command
// line did not set, from the environment and then the configuration file.
// fs.Name() must be the command's path as typed ("serve", "catalog sync"):
// it selects the file's groups. Call it right after fs.Parse, before the
// command validates or uses any value.
func applySettings(ctx context.Context, env *cliEnv, fs *flag.FlagSet) (*settings, error) {
	c, _ := ctx.Value(collectorKey{}).(*collector)
	if c != nil && !c.resolve {
		c.fs = fs
		return nil, errCollected
	}
	var known func() map[string]map[string]bool
	if c == nil {
		known = func() map[string]map[string]bool { return knownFlags(ctx, env) }
	}
	st, err := resolveSettings(env, fs, known)
	if c != nil {
		c.fs, c.st, c.err = fs, st, err
		return nil, errCollected
	}
	return st, err
}

// resolveSettings does the work of applySettings. With known (every
// command's flag names) it also rejects unknown keys in the file's shared
// groups; collection (config print) checks those itself.
func resolveSettings(env *cliEnv, fs *flag.FlagSet, known func() map[string]map[string]bool) (*settings, error) {
	st := &settings{
		command:  fs.Name(),
		explicit: map[string]bool{},
		fs:       fs,
		getenv:   env.getenv,
	}
	fs.Visit(func(f *flag.Flag) { st.explicit[f.Name] = true })

	switch {
	case st.explicit[configFlagName]:
		st.file = fs.Lookup(configFlagName).Value.String()
	case env.getenv(envName(configFlagName)) != "":
		st.file = env.getenv(envName(configFlagName))
	case fs.Lookup(configFlagName) != nil:
		st.file = fs.Lookup(configFlagName).Value.String()
	}
	var cf *configFile
	if st.file != "" {
		var err error
		if cf, err = loadConfigFile(st.file); err != nil {
			return nil, err
		}
		if err := cf.checkGroup(st.command, fs); err != nil {
			return nil, err
		}
		if known != nil {
			if err := cf.checkShared(known, st.command, fs); err != nil {
				return nil, err
			}
		}
	}

	var firstErr error
	fs.VisitAll(func(f *flag.Flag) {
		if firstErr != nil {
			return
		}
		s := setting{name: f.Name, usage: f.Usage}
		switch {
		case st.explicit[f.Name]:
			s.from, s.origin = sourceFlag, "--"+f.Name
		case f.Name == configFlagName:
			if v := env.getenv(envName(configFlagName)); v != "" {
				s.from, s.origin = sourceEnv, envName(configFlagName)
				if err := fs.Set(f.Name, v); err != nil {
					firstErr = fmt.Errorf("set --%s: %w", f.Name, err)
				}
			}
		case env.getenv(envName(f.Name)) != "":
			v := env.getenv(envName(f.Name))
			if err := fs.Set(f.Name, v); err != nil {
				firstErr = fmt.Errorf("invalid value %q for %s from environment variable %s: %w",
					maskValue(f.Name, v), f.Name, envName(f.Name), unwrapFlagErr(err))
				return
			}
			s.from, s.origin = sourceEnv, envName(f.Name)
		default:
			if cf == nil {
				break
			}
			fv, ok := cf.lookup(st.command, f.Name)
			if !ok {
				break
			}
			if err := fs.Set(f.Name, fv.value); err != nil {
				firstErr = fmt.Errorf("invalid value %q for key %q at %s:%d: %w",
					maskValue(f.Name, fv.value), f.Name, cf.path, fv.line, unwrapFlagErr(err))
				return
			}
			s.from, s.origin = sourceFile, fmt.Sprintf("%s:%d", cf.path, fv.line)
		}
		s.value = f.Value.String()
		st.values = append(st.values, s)
	})
	if firstErr != nil {
		return nil, firstErr
	}
	return st, nil
}

// unwrapFlagErr drops the flag package's own wrapping (it formats the
// message, it does not wrap), leaving the parser's reason.
func unwrapFlagErr(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}

// get returns the resolved setting named name.
func (st *settings) get(name string) (setting, bool) {
	for _, s := range st.values {
		if s.name == name {
			return s, true
		}
	}
	return setting{}, false
}

// logValues writes the effective configuration, secrets masked, as one
// attribute group: what operators want at the top of a service's log.
func (st *settings) logAttrs() []any {
	attrs := make([]any, 0, len(st.values))
	for _, s := range st.values {
		attrs = append(attrs, s.name, maskValue(s.name, s.value))
	}
	return attrs
}

// ---- configuration file ----

// fileValue is one key's value in the file and the line it is on.
type fileValue struct {
	value string
	line  int
}

// configFile is a parsed configuration file: group path ("" for the top
// level, "serve", "catalog sync") → flag name → value.
type configFile struct {
	path   string
	groups map[string]map[string]fileValue
	// groupLine is where each group starts, for error messages.
	groupLine map[string]int
}

func loadConfigFile(path string) (*configFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read configuration file: %w", err)
	}
	return parseConfigFile(path, data)
}

func parseConfigFile(path string, data []byte) (*configFile, error) {
	cf := &configFile{path: path, groups: map[string]map[string]fileValue{"": {}}, groupLine: map[string]int{"": 1}}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse configuration file %s: %w", path, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return cf, nil // empty file
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return cf, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: the configuration must be a mapping of keys to values", path, root.Line)
	}
	if err := cf.walk(root, ""); err != nil {
		return nil, err
	}
	return cf, nil
}

func (cf *configFile) walk(m *yaml.Node, group string) error {
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if seen[k.Value] {
			return fmt.Errorf("%s:%d: key %q appears twice", cf.path, k.Line, k.Value)
		}
		seen[k.Value] = true
		if v.Kind == yaml.AliasNode {
			v = v.Alias
		}
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			return fmt.Errorf("%s:%d: keys must be flag or subcommand names", cf.path, k.Line)
		}
		name := k.Value
		if strings.HasPrefix(name, "x-") {
			continue // extension keys hold anchors for reuse, as in compose files
		}
		switch v.Kind {
		case yaml.MappingNode:
			sub := strings.TrimSpace(group + " " + name)
			if _, dup := cf.groupLine[sub]; dup {
				return fmt.Errorf("%s:%d: group %q appears twice", cf.path, k.Line, sub)
			}
			cf.groups[sub] = map[string]fileValue{}
			cf.groupLine[sub] = k.Line
			if err := cf.walk(v, sub); err != nil {
				return err
			}
		case yaml.SequenceNode:
			// Lists are the comma-separated flags' natural YAML form.
			parts := make([]string, 0, len(v.Content))
			for _, e := range v.Content {
				if e.Kind != yaml.ScalarNode {
					return fmt.Errorf("%s:%d: key %q: list items must be plain values", cf.path, e.Line, name)
				}
				parts = append(parts, e.Value)
			}
			cf.groups[group][name] = fileValue{value: strings.Join(parts, ","), line: k.Line}
		case yaml.ScalarNode:
			if v.Tag == "!!null" {
				continue // "key:" with no value leaves the default
			}
			cf.groups[group][name] = fileValue{value: v.Value, line: k.Line}
		default:
			return fmt.Errorf("%s:%d: key %q has an unsupported value", cf.path, k.Line, name)
		}
	}
	return nil
}

// lookup finds name for the command path, most specific group first.
func (cf *configFile) lookup(command, name string) (fileValue, bool) {
	for _, g := range groupChain(command) {
		if v, ok := cf.groups[g][name]; ok {
			return v, true
		}
	}
	return fileValue{}, false
}

// groupChain lists the groups that apply to a command path, most specific
// first: "catalog sync" → "catalog sync", "catalog", "".
func groupChain(command string) []string {
	words := strings.Fields(command)
	chain := make([]string, 0, len(words)+1)
	for i := len(words); i > 0; i-- {
		chain = append(chain, strings.Join(words[:i], " "))
	}
	return append(chain, "")
}

// checkGroup rejects keys in the command's own group that it has no flag
// for: a typo there would otherwise be silently ignored.
func (cf *configFile) checkGroup(command string, fs *flag.FlagSet) error {
	g, ok := cf.groups[command]
	if !ok || command == "" {
		return nil
	}
	for _, k := range sortedKeys(g) {
		if k == configFlagName {
			return fmt.Errorf("%s:%d: key %q cannot be set inside a configuration file", cf.path, g[k].line, k)
		}
		if fs.Lookup(k) == nil {
			return fmt.Errorf("%s:%d: unknown key %q for atrium %s", cf.path, g[k].line, k, command)
		}
	}
	return nil
}

// checkShared rejects keys of the shared groups above the command that no
// command knows, and groups that name no command. A key this command does
// not have is fine when another command has it.
func (cf *configFile) checkShared(known func() map[string]map[string]bool, command string, fs *flag.FlagSet) error {
	var unknown []string
	for _, g := range groupChain(command)[1:] {
		for k := range cf.groups[g] {
			if fs.Lookup(k) == nil {
				unknown = append(unknown, k)
			}
		}
	}
	groupsOK := true
	for g := range cf.groups {
		if !slices.Contains(groupChain(command), g) {
			groupsOK = false
		}
	}
	if len(unknown) == 0 && groupsOK {
		return nil
	}
	return cf.checkAgainst(known())
}

// checkAgainst checks every group and key against the known commands'
// flags (command path → flag names).
func (cf *configFile) checkAgainst(known map[string]map[string]bool) error {
	for _, g := range sortedKeys(cf.groups) {
		keys := cf.groups[g]
		var allowed func(string) bool
		flags, isCmd := known[g]
		switch {
		case isCmd && flags == nil:
			continue // a command whose flags cannot be collected: nothing to check against
		case g == "":
			allowed = func(k string) bool { return anyHas(known, "", k) }
		case isCmd:
			allowed = func(k string) bool { return known[g][k] }
		case isCommandPrefix(known, g):
			allowed = func(k string) bool { return anyHas(known, g, k) }
		default:
			return fmt.Errorf("%s:%d: %q is neither a subcommand nor a key", cf.path, cf.groupLine[g], lastWord(g))
		}
		for _, k := range sortedKeys(keys) {
			if k == configFlagName {
				return fmt.Errorf("%s:%d: key %q cannot be set inside a configuration file", cf.path, keys[k].line, k)
			}
			if !allowed(k) {
				where := "any subcommand"
				if g != "" {
					where = "atrium " + g
				}
				return fmt.Errorf("%s:%d: unknown key %q for %s", cf.path, keys[k].line, k, where)
			}
		}
	}
	return nil
}

// anyHas reports whether a command under prefix has the flag key. A command
// whose flags are unknown (nil) may have it.
func anyHas(known map[string]map[string]bool, prefix, key string) bool {
	for cmd, flags := range known {
		if (prefix == "" || cmd == prefix || strings.HasPrefix(cmd, prefix+" ")) && (flags == nil || flags[key]) {
			return true
		}
	}
	return false
}

func isCommandPrefix(known map[string]map[string]bool, g string) bool {
	for cmd := range known {
		if strings.HasPrefix(cmd, g+" ") {
			return true
		}
	}
	return false
}

func lastWord(s string) string {
	f := strings.Fields(s)
	return f[len(f)-1]
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ---- collecting every command's flags ----

// errCollected stops a command right after applySettings when its flags were
// only being collected (config print, config example, key checks).
var errCollected = errors.New("flags collected")

// collectorKey is the context key under which a *collector travels into a
// command run only to learn its flags.
type collectorKey struct{}

// collector receives a command's FlagSet from applySettings instead of
// letting the command run. With resolve set it also resolves the settings.
type collector struct {
	resolve bool
	fs      *flag.FlagSet
	st      *settings
	err     error
}

// errNotWired reports a command whose flags cannot be collected because it
// does not call parseFlags/applySettings.
var errNotWired = errors.New("command does not apply settings (it must call parseFlags or applySettings after parsing)")

// nestedCommands lists the subcommands that dispatch further on their first
// argument; their parents have no flags of their own.
var nestedCommands = map[string][]string{
	"catalog":  {"sync", "watch"},
	"examples": {"add", "import", "list", "candidates", "promote", "disable", "enable", "remove"},
	"glossary": {"add", "list", "review", "remove"},
	"cache":    {"flush"},
	"config":   {"print", "check", "example"},
}

// commandPaths lists every runnable command path: "serve", "catalog sync"...
func commandPaths() []string {
	var paths []string
	for _, c := range commands() {
		if c.name == "version" {
			continue
		}
		if subs, ok := nestedCommands[c.name]; ok {
			for _, s := range subs {
				paths = append(paths, c.name+" "+s)
			}
			continue
		}
		paths = append(paths, c.name)
	}
	return paths
}

// collectFlags runs the command at path only as far as its flag parsing and
// returns its FlagSet, with settings resolved from env and the file named by
// args when resolve is set.
func collectFlags(ctx context.Context, env *cliEnv, path string, args []string, resolve bool) (*flag.FlagSet, *settings, error) {
	words := strings.Fields(path)
	var cmd *command
	for _, c := range commands() {
		if c.name == words[0] {
			cmd = &c
			break
		}
	}
	if cmd == nil {
		return nil, nil, fmt.Errorf("unknown command %q", path)
	}
	c := &collector{resolve: resolve}
	quiet := &cliEnv{stdout: io.Discard, stderr: io.Discard, getenv: env.getenv}
	err := cmd.run(context.WithValue(ctx, collectorKey{}, c), quiet, append(slices.Clone(words[1:]), args...))
	if c.fs == nil {
		if err != nil && !errors.Is(err, errCollected) {
			return nil, nil, fmt.Errorf("atrium %s: %w (%w)", path, errNotWired, err)
		}
		return nil, nil, fmt.Errorf("atrium %s: %w", path, errNotWired)
	}
	return c.fs, c.st, c.err
}

// knownFlags maps every command path to its flag names; nil for a command
// whose flags cannot be collected.
func knownFlags(ctx context.Context, env *cliEnv) map[string]map[string]bool {
	known := map[string]map[string]bool{}
	for _, p := range commandPaths() {
		fs, _, err := collectFlags(ctx, env, p, nil, false)
		if err != nil {
			known[p] = nil
			continue
		}
		names := map[string]bool{}
		fs.VisitAll(func(f *flag.Flag) { names[f.Name] = true })
		known[p] = names
	}
	return known
}

// ---- secrets ----

// secretWords mark a flag whose whole value is a secret when they appear as
// a word of its name.
var secretWords = []string{"key", "apikey", "password", "passwd", "secret", "token"}

// isSecretName reports whether a flag's value is a secret: a name with a
// secret word (llm-api-key, redis-password), unless the flag names a file
// holding the secret (tls-key, *-file, *-path), whose path is not secret.
func isSecretName(name string) bool {
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return r == '-' || r == '_' || r == '.' })
	if len(words) == 0 {
		return false
	}
	if last := words[len(words)-1]; last == "file" || last == "path" || last == "dir" || name == "tls-key" {
		return false
	}
	for _, w := range words {
		if slices.Contains(secretWords, w) {
			return true
		}
	}
	return false
}

// maskValue hides secrets in a flag's value for printing and logging: the
// whole value of a secret flag, and the password inside any DSN or URL.
func maskValue(name, value string) string {
	if value == "" {
		return ""
	}
	if isSecretName(name) {
		return maskedValue
	}
	return maskDSN(value)
}

// maskDSN hides passwords in URL-form DSNs (also comma-separated lists of
// them, as Redis Cluster seeds are written) and keyword/value DSNs.
func maskDSN(value string) string {
	if strings.Contains(value, "://") {
		parts := strings.Split(value, ",")
		for i, p := range parts {
			parts[i] = maskURLPassword(p)
		}
		value = strings.Join(parts, ",")
	}
	return maskKeywordPassword(value)
}

// maskURLPassword replaces the password of scheme://user:password@host...
// It works on the text rather than net/url so that unparsable values (a
// password with '#' or '/') are masked too.
func maskURLPassword(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return s
	}
	rest := s[i+3:]
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return s
	}
	// The authority ends at the first '/', '?' after the '@'; the userinfo
	// is everything before the last '@' in the part before that.
	userinfo := rest[:at]
	colon := strings.Index(userinfo, ":")
	if colon < 0 {
		return s
	}
	return s[:i+3] + userinfo[:colon+1] + maskedValue + rest[at:]
}

// maskKeywordPassword masks password=... in "host=x password=y" DSNs,
// including quoted values with escaped quotes.
func maskKeywordPassword(s string) string {
	lower := strings.ToLower(s)
	var b strings.Builder
	pos := 0
	for {
		j := strings.Index(lower[pos:], "password")
		if j < 0 {
			break
		}
		j += pos
		k := j + len("password")
		// must be a whole keyword followed by '='
		if j > 0 && !isSpace(lower[j-1]) && lower[j-1] != '?' && lower[j-1] != '&' {
			b.WriteString(s[pos:k])
			pos = k
			continue
		}
		e := k
		for e < len(s) && isSpace(s[e]) {
			e++
		}
		if e >= len(s) || s[e] != '=' {
			b.WriteString(s[pos:k])
			pos = k
			continue
		}
		e++
		for e < len(s) && isSpace(s[e]) {
			e++
		}
		end := e
		if end < len(s) && s[end] == '\'' {
			end++
			for end < len(s) && s[end] != '\'' {
				if s[end] == '\\' {
					end++
				}
				end++
			}
			end = min(end+1, len(s))
		} else {
			for end < len(s) && !isSpace(s[end]) && s[end] != '&' {
				end++
			}
		}
		b.WriteString(s[pos:e])
		b.WriteString(maskedValue)
		pos = end
	}
	b.WriteString(s[pos:])
	return b.String()
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// ---- reload on SIGHUP ----

// reloader re-resolves a fixed set of reloadable settings (those that need
// no new listener or connection) from the environment and the configuration
// file, and tells subscribers what changed. Flags given on the command line
// keep their value: they still win. The live FlagSet is never modified;
// subscribers apply new values themselves. Safe for concurrent use.
type reloader struct {
	command  string
	file     string
	getenv   func(string) string
	explicit map[string]bool
	defaults map[string]string
	protos   map[string]flag.Value

	mu      sync.Mutex
	current map[string]string
	checks  map[string]func(any) error
	subs    map[int]func(changed map[string]any)
	nextSub int
}

// Check registers fn to vet key's new value before a reload commits: a
// value fn rejects fails the whole reload, as an unparsable one does. Use it
// for rules the flag's type cannot express (a log level in a string flag).
func (r *reloader) Check(key string, fn func(any) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checks[key] = fn
}

// reloader prepares reloading of keys. Every key must be a flag of the
// command whose value type can be parsed afresh.
func (st *settings) reloader(keys ...string) (*reloader, error) {
	r := &reloader{
		command:  st.command,
		file:     st.file,
		getenv:   st.getenv,
		explicit: st.explicit,
		defaults: map[string]string{},
		protos:   map[string]flag.Value{},
		current:  map[string]string{},
		checks:   map[string]func(any) error{},
		subs:     map[int]func(map[string]any){},
	}
	for _, k := range keys {
		f := st.fs.Lookup(k)
		if f == nil {
			return nil, fmt.Errorf("reloadable key %q: atrium %s has no such flag", k, st.command)
		}
		if _, err := freshValue(f.Value, f.Value.String()); err != nil {
			return nil, fmt.Errorf("reloadable key %q: %w", k, err)
		}
		r.defaults[k] = f.DefValue
		r.protos[k] = f.Value
		r.current[k] = f.Value.String()
	}
	return r, nil
}

// freshValue parses s into a new value of proto's type, leaving proto alone.
// Standard flag values are pointers to a basic type, so a new zero pointee
// is a valid empty value; types for which that does not hold are refused.
func freshValue(proto flag.Value, s string) (v flag.Value, err error) {
	t := reflect.TypeOf(proto)
	if t.Kind() != reflect.Pointer {
		return nil, fmt.Errorf("flag type %s cannot be reloaded", t)
	}
	nv, ok := reflect.New(t.Elem()).Interface().(flag.Value)
	if !ok {
		return nil, fmt.Errorf("flag type %s cannot be reloaded", t)
	}
	defer func() {
		if recover() != nil {
			v, err = nil, fmt.Errorf("flag type %s cannot be reloaded", t)
		}
	}()
	if err := nv.Set(s); err != nil {
		return nil, err
	}
	return nv, nil
}

// Subscribe registers fn to be called after each reload that changed at
// least one key, with the changed keys' new values (typed as the flag's
// Get returns them: string, int, bool, time.Duration...). fn runs on the
// reloading goroutine and must not call Reload. The returned func
// unsubscribes.
func (r *reloader) Subscribe(fn func(changed map[string]any)) (unsubscribe func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := r.nextSub
	r.nextSub++
	r.subs[id] = fn
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.subs, id)
	}
}

// Reload re-reads the environment and the configuration file and returns
// the reloadable keys whose value changed. Either every key parses and the
// changes are published, or nothing changes and the error names the key.
func (r *reloader) Reload() (map[string]any, error) {
	var cf *configFile
	if r.file != "" {
		var err error
		if cf, err = loadConfigFile(r.file); err != nil {
			return nil, err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	next := map[string]string{}
	typed := map[string]any{}
	for _, k := range sortedKeys(r.protos) {
		if r.explicit[k] {
			continue
		}
		raw, where := r.defaults[k], "default"
		if v := r.getenv(envName(k)); v != "" {
			raw, where = v, "environment variable "+envName(k)
		} else if cf != nil {
			if fv, ok := cf.lookup(r.command, k); ok {
				raw, where = fv.value, fmt.Sprintf("%s:%d", cf.path, fv.line)
			}
		}
		v, err := freshValue(r.protos[k], raw)
		if err != nil {
			return nil, fmt.Errorf("reload: invalid value %q for key %q from %s: %w", maskValue(k, raw), k, where, err)
		}
		if s := v.String(); s != r.current[k] {
			next[k] = s
			if g, ok := v.(flag.Getter); ok {
				typed[k] = g.Get()
			} else {
				typed[k] = s
			}
		}
	}
	if len(next) == 0 {
		return typed, nil
	}
	for _, k := range sortedKeys(typed) {
		if check := r.checks[k]; check != nil {
			if err := check(typed[k]); err != nil {
				return nil, fmt.Errorf("reload: invalid value %q for key %q: %w", maskValue(k, next[k]), k, err)
			}
		}
	}
	for k, v := range next {
		r.current[k] = v
	}
	for _, id := range sortedIntKeys(r.subs) {
		r.subs[id](typed)
	}
	return typed, nil
}

func sortedIntKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}

// reloadReporter is where Run reports each reload's outcome (an *slog.Logger
// satisfies it).
type reloadReporter interface {
	Info(msg string, args ...any)
	Error(msg string, args ...any)
}

// runOn reloads on every value from hup (SIGHUP, see startReload) until
// ctx ends, reporting outcomes to log.
func (r *reloader) runOn(ctx context.Context, hup <-chan os.Signal, log reloadReporter) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			changed, err := r.Reload()
			if err != nil {
				log.Error("configuration reload failed; keeping the current settings", "err", err)
				continue
			}
			attrs := make([]any, 0, 2*len(changed))
			for _, k := range sortedKeys(changed) {
				attrs = append(attrs, k, maskValue(k, fmt.Sprint(changed[k])))
			}
			log.Info("configuration reloaded", append([]any{"changed", len(changed)}, attrs...)...)
		}
	}
}
