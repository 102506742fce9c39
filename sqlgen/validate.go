package sqlgen

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/atriumdb/atrium/proxy"
)

// Checked is generated SQL that passed the static checks.
type Checked struct {
	// SQL is the one statement's text, without a trailing semicolon.
	SQL string
	// Relations are the relations it reads, as quoted (schema-qualified
	// when written so) names, sorted, without CTE names.
	Relations []string
}

// deniedFunctions have side effects outside the transaction or on the session
// that a read-only transaction does not prevent. Check refuses them by name,
// without a session, so the LLM hears early; it is only a first filter:
// names hidden in SQL text or behind user-defined functions, operators and
// casts are caught by checkCalls, which allows by pg_proc volatility in the
// question's own database. Exact names.
var deniedFunctions = map[string]bool{
	"set_config": true, "pg_terminate_backend": true, "pg_cancel_backend": true,
	"pg_reload_conf": true, "pg_rotate_logfile": true, "pg_notify": true,
	"pg_switch_wal": true, "pg_create_restore_point": true, "pg_logical_emit_message": true,
	"pg_promote": true, "pg_log_backend_memory_contexts": true, "pg_stat_reset": true,
	"pg_import_system_collations": true,
}

// deniedFunctionPrefixes cover families: advisory locks (outlive the
// transaction), large objects, server files, dblink (another connection, not
// read-only), replication slots.
var deniedFunctionPrefixes = []string{
	"pg_advisory", "pg_try_advisory", "lo_", "pg_read_", "pg_ls_", "pg_file_", "pg_stat_file",
	"dblink", "pg_create_", "pg_drop_replication", "pg_replication_", "pg_stat_reset",
}

func deniedFunction(name string) bool {
	if deniedFunctions[name] {
		return true
	}
	for _, p := range deniedFunctionPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// notReadOnly builds the 0A000 error generated SQL gets when it is not a
// single read-only query.
func notReadOnly(format string, args ...any) *proxy.Error {
	return errorf(CodeNotReadOnly, "generated SQL is not a single read-only SELECT: "+format, args...)
}

// Check parses sql with PostgreSQL's own parser and accepts exactly one
// SELECT (including WITH ... SELECT, set operations and VALUES) with no
// data-modifying CTE, locking clause, SELECT INTO or side-effecting
// function (by name; the catalog check is checkCalls). It returns a
// *proxy.Error: 42601 when the text does not parse, 0A000 when it is not a
// single read-only query.
func Check(sql string) (*Checked, error) {
	res, err := pg_query.Parse(sql)
	if err != nil {
		return nil, &proxy.Error{Code: CodeSyntax, Message: "generated SQL does not parse: " + err.Error(), Err: err}
	}
	switch len(res.Stmts) {
	case 0:
		return nil, errorf(CodeSyntax, "the LLM returned no SQL statement")
	case 1:
	default:
		return nil, notReadOnly("it holds %d statements", len(res.Stmts))
	}
	raw := res.Stmts[0]
	sel := raw.GetStmt().GetSelectStmt()
	if sel == nil {
		return nil, notReadOnly("it is a %s", stmtKind(raw.GetStmt()))
	}
	if sel.GetIntoClause() != nil {
		return nil, notReadOnly("SELECT INTO creates a table")
	}
	v := &checker{ctes: map[string]bool{}, rels: map[string]bool{}}
	v.walk(sel.ProtoReflect())
	if v.err != nil {
		return nil, v.err
	}
	text := sql
	if loc, n := int(raw.GetStmtLocation()), int(raw.GetStmtLen()); loc >= 0 && loc <= len(sql) {
		if n > 0 && loc+n <= len(sql) {
			text = sql[loc : loc+n]
		} else {
			text = sql[loc:]
		}
	}
	text = strings.TrimRight(strings.TrimSpace(text), "; \t\r\n")
	rels := make([]string, 0, len(v.rels))
	for r := range v.rels {
		rels = append(rels, r)
	}
	sort.Strings(rels)
	return &Checked{SQL: text, Relations: rels}, nil
}

// stmtKind names a statement node for messages: "InsertStmt" becomes
// "INSERT statement".
func stmtKind(n *pg_query.Node) string {
	if n == nil || n.GetNode() == nil {
		return "empty statement"
	}
	m := n.ProtoReflect()
	name := ""
	m.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		name = string(fd.Message().Name())
		return false
	})
	switch name {
	case "InsertStmt", "UpdateStmt", "DeleteStmt", "MergeStmt":
		return strings.ToUpper(strings.TrimSuffix(name, "Stmt")) + " statement"
	case "VariableSetStmt":
		return "SET statement"
	case "CopyStmt":
		return "COPY statement"
	case "TransactionStmt":
		return "transaction control statement"
	case "ExplainStmt":
		return "EXPLAIN statement"
	}
	if strings.HasPrefix(name, "Create") || strings.HasPrefix(name, "Alter") || strings.HasPrefix(name, "Drop") || name == "TruncateStmt" || name == "RenameStmt" || name == "GrantStmt" {
		return "DDL statement (" + name + ")"
	}
	return name
}

// checker walks a parse tree through protobuf reflection, so node types added
// by a future parser version are still visited.
type checker struct {
	err  error
	ctes map[string]bool
	rels map[string]bool
}

func (c *checker) walk(m protoreflect.Message) {
	if c.err != nil || !m.IsValid() {
		return
	}
	switch n := m.Interface().(type) {
	case *pg_query.InsertStmt, *pg_query.UpdateStmt, *pg_query.DeleteStmt, *pg_query.MergeStmt:
		c.err = notReadOnly("it modifies data (in a WITH clause)")
		return
	case *pg_query.SelectStmt:
		if len(n.GetLockingClause()) > 0 {
			c.err = notReadOnly("it has a locking clause (FOR UPDATE/SHARE)")
			return
		}
		if n.GetIntoClause() != nil {
			c.err = notReadOnly("SELECT INTO creates a table")
			return
		}
		// CTE names first: the FROM clause is walked before the WITH
		// clause, and a CTE is not a relation to check privileges on.
		for _, cte := range n.GetWithClause().GetCtes() {
			c.ctes[cte.GetCommonTableExpr().GetCtename()] = true
		}
	case *pg_query.RangeVar:
		if n.GetSchemaname() == "" && c.ctes[n.GetRelname()] {
			break
		}
		name := quoteIdent(n.GetRelname())
		if n.GetSchemaname() != "" {
			name = quoteIdent(n.GetSchemaname()) + "." + name
		}
		c.rels[name] = true
	case *pg_query.FuncCall:
		parts := n.GetFuncname()
		if len(parts) > 0 {
			fn := strings.ToLower(parts[len(parts)-1].GetString_().GetSval())
			if deniedFunction(fn) {
				c.err = notReadOnly("it calls %s(), which has side effects", fn)
				return
			}
		}
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len() && c.err == nil; i++ {
				c.walk(l.Get(i).Message())
			}
		case fd.Message() != nil && !fd.IsMap():
			c.walk(v.Message())
		}
		return c.err == nil
	})
}

func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

var fenceRE = regexp.MustCompile("(?s)```[ \t]*([A-Za-z0-9_-]*)[ \t]*\r?\n(.*?)```")

// ExtractSQL takes the SQL out of an LLM's reply: the first ```sql fenced
// block (or the first fenced block of any language when none is marked sql),
// else the whole reply.
func ExtractSQL(reply string) string {
	ms := fenceRE.FindAllStringSubmatch(reply, -1)
	for _, m := range ms {
		if strings.EqualFold(m[1], "sql") || strings.EqualFold(m[1], "postgresql") || strings.EqualFold(m[1], "postgres") {
			return strings.TrimSpace(m[2])
		}
	}
	if len(ms) > 0 {
		return strings.TrimSpace(ms[0][2])
	}
	s := strings.TrimSpace(reply)
	// An unterminated fence (the reply was cut at max_tokens).
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			s = strings.TrimSpace(rest[nl+1:])
		}
	}
	return s
}

// describeErr turns a check failure into the text the repair prompt sends
// back to the LLM.
func describeErr(err error) string {
	if pe, ok := err.(*proxy.Error); ok {
		return pe.Message
	}
	if ue, ok := err.(*proxy.UpstreamError); ok {
		s := fmt.Sprintf("ERROR %s: %s", ue.Code, ue.Message)
		if ue.Detail != "" {
			s += "\nDETAIL: " + ue.Detail
		}
		if ue.Hint != "" {
			s += "\nHINT: " + ue.Hint
		}
		return s
	}
	return err.Error()
}
