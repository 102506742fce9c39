package question

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/proxy/resultcache"
)

// cached reports whether an answer says it came from the result cache.
func (a answer) cached() bool {
	for _, n := range a.notices {
		if strings.Contains(n, "(cached result)") {
			return true
		}
	}
	return false
}

// TestSecurityInvokerViewOverRowSecurityNotCached: rows of an RLS table
// read through a security_invoker view depend on app.tenant; they are never
// cached, so a globex session never gets acme's rows (finding 4).
func TestSecurityInvokerViewOverRowSecurityNotCached(t *testing.T) {
	forEachCache(t, func(t *testing.T, store resultcache.Store) {
		e, role := newSecEnv(t, store, false)
		const q = "/* nl: list the tenant tickets */"
		acme := e.connect(t, role)
		require.Nil(t, acme.ask(t, "SET app.tenant = 'acme'").err)
		a := acme.ask(t, q)
		require.Nil(t, a.err)
		require.Equal(t, [][]string{{"Printer broken Zanzibar"}}, a.rows)
		globex := e.connect(t, role)
		require.Nil(t, globex.ask(t, "SET app.tenant = 'globex'").err)
		a = globex.ask(t, q)
		require.Nil(t, a.err)
		require.Equal(t, [][]string{{"Hidden Kilimanjaro incident"}}, a.rows)
		a = acme.ask(t, q)
		require.Equal(t, [][]string{{"Printer broken Zanzibar"}}, a.rows)
		require.False(t, a.cached(), "rows behind row-level security are never cached")
	})
}

// TestCTENamedLikeTableHonoursRevoke: a CTE named like the table it reads
// does not hide the table from the privilege re-check of a cache hit: after
// REVOKE the cached rows are not served (finding 4).
func TestCTENamedLikeTableHonoursRevoke(t *testing.T) {
	forEachCache(t, func(t *testing.T, store resultcache.Store) {
		e, role := newSecEnv(t, store, false)
		const q = "/* nl: titles of the tenant documents */"
		c := e.connect(t, role)
		require.Nil(t, c.ask(t, "SET search_path = hr").err)
		a := c.ask(t, q)
		require.Nil(t, a.err)
		require.Equal(t, [][]string{{"handbook"}, {"roadmap"}}, a.rows)
		a = c.ask(t, q)
		require.True(t, a.cached(), "a query on a table without RLS is cached: %v", a.notices)

		_, err := e.pool.Exec(context.Background(), "REVOKE SELECT ON hr.tenant_docs FROM "+role)
		require.NoError(t, err)
		a = c.ask(t, q)
		require.Empty(t, a.rows, "a revoked role got cached rows")
		require.NotNil(t, a.err)
		require.Equal(t, "42501", a.err.Code)
	})
}

// TestOpaqueFunctionNotCached: a query calling a function that is not an
// IMMUTABLE built-in (here now(), STABLE) is run again, never cached.
func TestOpaqueFunctionNotCached(t *testing.T) {
	e, role := newSecEnv(t, nil, false)
	c := e.connect(t, role)
	for range 2 {
		a := c.ask(t, "/* nl: events with the clock */")
		require.Nil(t, a.err)
		require.Len(t, a.rows, 1)
		require.False(t, a.cached())
	}
	a := c.ask(t, "/* nl: events */")
	require.Nil(t, a.err)
	a = c.ask(t, "/* nl: events */")
	require.True(t, a.cached(), "the same table without the function is cached")
}
