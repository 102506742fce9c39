package question

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/retriever"
)

func TestTextArray(t *testing.T) {
	e := newEnv(t, envOpts{noLLM: true})
	in := []string{`plain`, `a"b`, `c\d`, `x,y`, `{z}`, ` sp `, `NULL`, ``}
	require.Equal(t, `{"plain","a\"b","c\\d","x,y","{z}"," sp ","NULL",""}`, textArray(in))
	var out []string
	require.NoError(t, e.pool.QueryRow(context.Background(), "SELECT ($1::text)::text[]", textArray(in)).Scan(&out))
	require.Equal(t, in, out)
}

// TestRetrievePrivileges runs RETRIEVE through a real proxy as a role that
// may read only some tables: the others never appear, nor do join paths
// through them; a superuser sees everything.
func TestRetrievePrivileges(t *testing.T) {
	e := newEnv(t, envOpts{noLLM: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	role := e.newRole(t, `GRANT USAGE ON SCHEMA shop, zoo TO %[1]s;
GRANT SELECT ON shop.customers TO %[1]s;
GRANT SELECT (title) ON shop.products TO %[1]s;`)
	cc := e.pool.Config().ConnConfig
	l := struct{ Addr func() net.Addr }{func() net.Addr { return e.addr }}

	const question = "RETRIEVE which customers ordered which products, with quantities of each order line"
	retrieve := func(t *testing.T, user string, mode pgx.QueryExecMode) (tables []string, paths []string) {
		t.Helper()
		conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", user, l.Addr(), cc.Database))
		require.NoError(t, err)
		defer conn.Close(ctx)
		rows, err := conn.Query(ctx, question, mode)
		require.NoError(t, err)
		defer rows.Close()
		rank := 0
		for rows.Next() {
			var (
				r             int32
				schema, table string
				score         float64
				chosen        bool
				reason        string
				join          *string
			)
			require.NoError(t, rows.Scan(&r, &schema, &table, &score, &chosen, &reason, &join))
			rank++
			require.EqualValues(t, rank, r, "ranks are renumbered without gaps")
			tables = append(tables, schema+"."+table)
			if join != nil {
				paths = append(paths, *join)
			}
		}
		require.NoError(t, rows.Err())
		return tables, paths
	}

	all, _ := retrieve(t, "postgres", pgx.QueryExecModeSimpleProtocol)
	require.Contains(t, all, "shop.orders")
	require.Contains(t, all, "shop.order_lines")

	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		t.Run(mode.String(), func(t *testing.T) {
			tables, paths := retrieve(t, role, mode)
			require.NotEmpty(t, tables)
			for _, tb := range tables {
				require.Contains(t, []string{"shop.customers", "shop.products"}, tb, "only readable tables are shown")
			}
			for _, p := range paths {
				require.False(t, strings.Contains(p, "shop.orders") || strings.Contains(p, "shop.order_lines") || strings.Contains(p, "zoo."), p)
			}
		})
	}
}

// TestCutColumns: a readable table loses the columns without a grant, and
// a table with row-level security also loses what the sync role derived
// from rows (samples, described purpose and column descriptions); the
// catalog's own table is never modified.
func TestCutColumns(t *testing.T) {
	ti := &retriever.TableInfo{Schema: "hr", Name: "tickets", Comment: "own comment", Purpose: "tickets such as 'Hidden Kilimanjaro incident'",
		Columns: []retriever.ColumnInfo{
			{Name: "id", Comment: "key"},
			{Name: "subject", Description: "e.g. 'Hidden Kilimanjaro incident'", SampleValues: []string{"Hidden Kilimanjaro incident"}},
			{Name: "secret", Comment: "not granted"},
		}}
	cols := map[string]bool{"id": true, "subject": true}

	plain := cutColumns(ti, &access{readable: true, columns: cols})
	require.Equal(t, []string{"id", "subject"}, []string{plain.Columns[0].Name, plain.Columns[1].Name})
	require.Len(t, plain.Columns, 2)
	require.Equal(t, ti.Purpose, plain.Purpose)

	rls := cutColumns(ti, &access{readable: true, rowSecurity: true, columns: cols})
	require.Len(t, rls.Columns, 2)
	require.Empty(t, rls.Purpose)
	require.Empty(t, rls.Columns[1].Description)
	require.Empty(t, rls.Columns[1].SampleValues)
	require.Equal(t, "own comment", rls.Comment)
	require.Equal(t, "key", rls.Columns[0].Comment)

	require.Len(t, ti.Columns, 3, "the snapshot's table is not modified")
	require.NotEmpty(t, ti.Purpose)
	require.NotEmpty(t, ti.Columns[1].Description)
}
