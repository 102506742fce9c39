package question

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFollowUp: the follow-up rules on questions both ways, each with the
// rule that decided.
func TestFollowUp(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want string // "" : a question of its own
	}{
		{"and by month?", FollowCue},
		{"And only for Portugal?", FollowCue},
		{"only the ones in Lisbon", FollowCue},
		{"what about last year?", FollowCue},
		{"How about Chile?", FollowCue},
		{"but excluding refunds", FollowCue},
		{"same for 2023", FollowCue},
		{"now per customer", FollowCue},
		{"also their emails", FollowCue},
		{"instead count distinct customers", FollowCue},
		{"then sort descending", FollowCue},
		{"show those per month", FollowReference},
		{"which of them are overdue?", FollowReference},
		{"sort these by amount", FollowReference},
		{"break that down by year", FollowReference},
		{"that, but weekly", FollowReference},
		{"sort it by date", FollowReference},
		{"by month?", FollowFragment},
		{"per country", FollowFragment},
		{"in Lisbon?", FollowFragment},
		{"last year?", FollowFragment},
		{"top 5", FollowFragment},
		{"2023?", FollowFragment},
		{"by month and country", FollowFragment},

		{"How many employees are in each department?", ""},
		{"How many employees?", ""},
		{"List all products with their prices", ""},
		{"Which customers placed more than 3 orders?", ""},
		{"What is the average salary per department?", ""},
		{"customers that bought shoes", ""},
		{"Show me the orders that shipped late", ""},
		{"orders placed last month", ""},
		{"Top 5 customers by revenue in Europe", ""},
		{"andorra customers", ""},
		{"", ""},
		{"?!", ""},
	} {
		reason, ok := FollowUp(tc.q)
		require.Equal(t, tc.want != "", ok, "%q", tc.q)
		require.Equal(t, tc.want, reason, "%q", tc.q)
	}
}

// TestContinues: only an answered turn with tables can be followed up.
func TestContinues(t *testing.T) {
	prev := Turn{RequestID: "r1", Question: "orders per country", SQL: "SELECT 1", Tables: []string{"shop.orders"}}
	require.NotNil(t, continues("and by month?", prev, true))
	require.Nil(t, continues("and by month?", prev, false), "no previous turn")
	failed := prev
	failed.SQLState = "42501"
	require.Nil(t, continues("and by month?", failed, true), "the previous question failed")
	empty := prev
	empty.Tables = nil
	require.Nil(t, continues("and by month?", empty, true), "the previous turn found no tables")
	require.Nil(t, continues("How many employees are in each department?", prev, true))
}

func TestResetsSession(t *testing.T) {
	for sql, want := range map[string]bool{
		"DISCARD ALL":               true,
		"discard all;":              true,
		"  /* pooler */ RESET  ALL": true,
		"-- x\nreset all ; ":        true,
		"DISCARD PLANS":             false,
		"RESET search_path":         false,
		"SELECT 1":                  false,
		"reset":                     false,
		"DISCARD ALL; SELECT 1":     false,
		"":                          false,
	} {
		require.Equal(t, want, resetsSession(sql), "%q", sql)
	}
}

func TestSplitRelation(t *testing.T) {
	for in, want := range map[string][3]string{
		"shop.orders":          {"shop", "orders", "t"},
		`"shop"."orders"`:      {"shop", "orders", "t"},
		`Shop.Orders`:          {"shop", "orders", "t"},
		`"My Schema"."T.x"`:    {"My Schema", "T.x", "t"},
		`"a""b".c`:             {`a"b`, "c", "t"},
		"orders":               {"", "orders", "t"},
		"db.shop.orders":       {"", "", ""},
		"shop.":                {"", "", ""},
		`"unterminated.orders`: {"", "", ""},
		"":                     {"", "", ""},
		"shop orders":          {"", "", ""},
		`"shop"x.orders`:       {"", "", ""},
	} {
		s, n, ok := splitRelation(in)
		got := [3]string{s, n, ""}
		if ok {
			got[2] = "t"
		}
		require.Equal(t, want, got, "%q", in)
	}
}
