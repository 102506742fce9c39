package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// runConfig dispatches `atrium config print|check|example`.
func runConfig(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) == 0 {
		configUsage(env.stderr)
		return usageError{"config: a subcommand is required (print, check or example)"}
	}
	switch args[0] {
	case "print":
		return runConfigPrint(ctx, env, args[1:])
	case "check":
		return runConfigCheck(ctx, env, args[1:])
	case "example":
		return runConfigExample(ctx, env, args[1:])
	case "-h", "-help", "--help", "help":
		configUsage(env.stdout)
		return flag.ErrHelp
	default:
		configUsage(env.stderr)
		return usageError{fmt.Sprintf("config: unknown subcommand %q", args[0])}
	}
}

func configUsage(w io.Writer) {
	fmt.Fprint(w, `Usage:
  atrium config print [--config FILE] [--json] [COMMAND...]
      the effective configuration of COMMAND (default: every command),
      each value with its source; secrets masked
  atrium config check [--config FILE]
      validate the configuration file and environment for every command
  atrium config example
      write an annotated configuration file with every key at its default

Precedence: flags > environment (ATRIUM_<KEY>) > configuration file > defaults.
`)
}

// runConfigPrint shows the configuration each command would run with.
func runConfigPrint(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("config print", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	setUsage(env, fs, "atrium config print [--config FILE] [--json] [COMMAND...]",
		"Prints the effective configuration of COMMAND (default: every command), each value with its source, secrets masked. Precedence: flags > environment (ATRIUM_<KEY>) > configuration file > defaults.")
	asJSON := fs.Bool("json", false, "print JSON instead of YAML")
	st, err := parseFlags(ctx, env, fs, args)
	if err != nil {
		return err
	}
	var paths []string
	for _, p := range commandPaths() {
		if !strings.HasPrefix(p, "config ") { // config's own flags are not configuration
			paths = append(paths, p)
		}
	}
	if fs.NArg() > 0 {
		p := strings.Join(fs.Args(), " ")
		if !containsString(commandPaths(), p) {
			return usageError{fmt.Sprintf("config print: unknown command %q (one of: %s)", p, strings.Join(paths, ", "))}
		}
		paths = []string{p}
	}
	resolved, err := resolveAll(ctx, env, st.file, paths)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env.stdout, st.file, resolved)
	}
	return printYAML(env.stdout, st.file, resolved)
}

// runConfigCheck validates the file and environment against every command.
func runConfigCheck(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("config check", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	setUsage(env, fs, "atrium config check [--config FILE]",
		"Validates the configuration file and environment for every command; exits non-zero with what is wrong.")
	st, err := parseFlags(ctx, env, fs, args)
	if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{"config check: no arguments expected"}
	}
	if _, err := resolveAll(ctx, env, st.file, commandPaths()); err != nil {
		return err
	}
	if st.file == "" {
		fmt.Fprintln(env.stdout, "configuration OK (no configuration file; environment and defaults only)")
	} else {
		fmt.Fprintf(env.stdout, "configuration OK (%s)\n", st.file)
	}
	return nil
}

// runConfigExample writes deploy/atrium.example.yaml's content.
func runConfigExample(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("config example", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	setUsage(env, fs, "atrium config example",
		"Writes an annotated configuration file with every key at its default.")
	if _, err := parseFlags(ctx, env, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{"config example: no arguments expected"}
	}
	out, err := exampleConfig(ctx, env)
	if err != nil {
		return err
	}
	_, err = env.stdout.Write(out)
	return err
}

// resolvedCommand is one command's effective configuration.
type resolvedCommand struct {
	path string
	fs   *flag.FlagSet
	st   *settings
}

// resolveAll resolves every command in paths with the given file, and checks
// the file's keys against all commands. Commands that cannot be collected
// are skipped (they do not apply settings yet).
func resolveAll(ctx context.Context, env *cliEnv, file string, paths []string) ([]resolvedCommand, error) {
	var args []string
	if file != "" {
		args = []string{"--" + configFlagName, file}
		cf, err := loadConfigFile(file)
		if err != nil {
			return nil, err
		}
		if err := cf.checkAgainst(knownFlags(ctx, env)); err != nil {
			return nil, err
		}
	}
	var out []resolvedCommand
	for _, p := range paths {
		fs, st, err := collectFlags(ctx, env, p, args, true)
		switch {
		case errors.Is(err, errNotWired):
			continue
		case err != nil:
			return nil, fmt.Errorf("atrium %s: %w", p, err)
		}
		out = append(out, resolvedCommand{path: p, fs: fs, st: st})
	}
	return out, nil
}

func printYAML(w io.Writer, file string, cmds []resolvedCommand) error {
	var b bytes.Buffer
	b.WriteString("# Effective configuration: flags > environment > configuration file > defaults.\n")
	b.WriteString("# Secrets are masked. Each value is followed by where it came from.\n")
	if file != "" {
		fmt.Fprintf(&b, "# Configuration file: %s\n", file)
	}
	writeGroups(&b, cmds, func(b *bytes.Buffer, indent string, rc resolvedCommand) {
		for _, s := range rc.st.values {
			if s.name == configFlagName {
				continue
			}
			origin := s.from.String()
			if s.origin != "" {
				origin += " " + s.origin
			}
			fmt.Fprintf(b, "%s%s: %s  # %s\n", indent, s.name,
				yamlValue(rc.fs.Lookup(s.name), maskValue(s.name, s.value)), origin)
		}
	})
	_, err := w.Write(b.Bytes())
	return err
}

func printJSON(w io.Writer, file string, cmds []resolvedCommand) error {
	type value struct {
		Value  string `json:"value"`
		Source string `json:"source"`
		Origin string `json:"origin,omitempty"`
	}
	out := struct {
		ConfigFile string                      `json:"config_file,omitempty"`
		Commands   map[string]map[string]value `json:"commands"`
	}{ConfigFile: file, Commands: map[string]map[string]value{}}
	for _, rc := range cmds {
		m := map[string]value{}
		for _, s := range rc.st.values {
			if s.name == configFlagName {
				continue
			}
			m[s.name] = value{Value: maskValue(s.name, s.value), Source: s.from.String(), Origin: s.origin}
		}
		out.Commands[rc.path] = m
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// writeGroups writes one YAML mapping per command, nesting "catalog sync"
// under "catalog:", and lets body write each command's keys.
func writeGroups(b *bytes.Buffer, cmds []resolvedCommand, body func(b *bytes.Buffer, indent string, rc resolvedCommand)) {
	open := ""
	for _, rc := range cmds {
		words := strings.Fields(rc.path)
		indent := "  "
		if len(words) == 2 {
			if open != words[0] {
				fmt.Fprintf(b, "\n%s:\n", words[0])
				open = words[0]
			} else {
				b.WriteString("\n")
			}
			fmt.Fprintf(b, "  %s:\n", words[1])
			indent = "    "
		} else {
			open = ""
			fmt.Fprintf(b, "\n%s:\n", rc.path)
		}
		body(b, indent, rc)
	}
}

// yamlValue renders a flag's value as a YAML scalar that parses back to the
// same text: bare for booleans and numbers, quoted when YAML would read the
// text as something else.
func yamlValue(f *flag.Flag, s string) string {
	if f != nil && s != maskedValue {
		if g, ok := f.Value.(flag.Getter); ok {
			switch g.Get().(type) {
			case time.Duration:
			case bool, int, int64, uint, uint64, float64:
				return s
			}
		}
	}
	out, err := yaml.Marshal(s)
	if err != nil {
		return fmt.Sprintf("%q", s)
	}
	return strings.TrimSuffix(string(out), "\n")
}

// exampleConfig generates the annotated example configuration: every key of
// every command at its default, with its usage and environment variable.
func exampleConfig(ctx context.Context, env *cliEnv) ([]byte, error) {
	// Defaults only: neither the environment nor a file may leak into it.
	clean := &cliEnv{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
	var cmds []resolvedCommand
	var missing []string
	for _, p := range commandPaths() {
		if strings.HasPrefix(p, "config ") {
			continue // config's own flags are not configuration
		}
		fs, _, err := collectFlags(ctx, clean, p, nil, false)
		if errors.Is(err, errNotWired) {
			missing = append(missing, p)
			continue
		}
		if err != nil {
			return nil, err
		}
		cmds = append(cmds, resolvedCommand{path: p, fs: fs})
	}
	var b bytes.Buffer
	b.WriteString(exampleHeader)
	for _, m := range missing {
		fmt.Fprintf(&b, "# (atrium %s: its flags could not be read; it does not call parseFlags yet)\n", m)
	}
	writeGroups(&b, cmds, func(b *bytes.Buffer, indent string, rc resolvedCommand) {
		first := true
		rc.fs.VisitAll(func(f *flag.Flag) {
			if f.Name == configFlagName {
				return
			}
			if !first {
				b.WriteString("\n")
			}
			first = false
			_, usage := flag.UnquoteUsage(f)
			for _, line := range strings.Split(strings.TrimSpace(usage), "\n") {
				fmt.Fprintf(b, "%s# %s\n", indent, strings.TrimSpace(line))
			}
			note := "env " + envName(f.Name)
			if isSecretName(f.Name) {
				note += "; a secret: prefer the environment to this file"
			}
			fmt.Fprintf(b, "%s# (%s)\n", indent, note)
			fmt.Fprintf(b, "%s%s: %s\n", indent, f.Name, yamlValue(f, f.DefValue))
		})
	})
	return b.Bytes(), nil
}

const exampleHeader = `# Atrium configuration: every key of every subcommand, at its default.
#
# Generated by "atrium config example"; a test in cmd/atrium fails when this
# file and the commands' flags differ, so it cannot drift. Regenerate with
#   go run ./cmd/atrium config example > deploy/atrium.example.yaml
#
# Precedence, for every key: command-line flag > environment variable
# (ATRIUM_ + the key upper-cased, '-' -> '_', e.g. ATRIUM_LLM_URL) > this
# file (--config FILE or ATRIUM_CONFIG=FILE) > default.
#
# Keys are flag names. A key at the top level of a file applies to every
# subcommand that has that flag; a key under a subcommand's name (below)
# applies to that subcommand only and wins over the top level. Lists may be
# written as YAML lists or comma-separated. Unknown keys and invalid values
# stop the command at start-up with the file and line.
#
# "atrium config print" shows the effective configuration, secrets masked;
# "atrium config check" validates a file for every subcommand. On SIGHUP,
# "atrium serve" re-reads the environment and this file and applies the
# settings that need no new listener (see docs/operations.md).
`

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
