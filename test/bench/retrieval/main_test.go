package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/question"
)

// Every benchmark question reaches the proxy as one RETRIEVE whose question
// is the benchmark's text: a semicolon in it (a Spider dev question has
// one) would otherwise end the statement and get 0A000.
func TestRetrieveSQLKeepsTheQuestion(t *testing.T) {
	for _, q := range []string{
		"How many singers do we have?",
		"Find the number of employees hired in each shop; show the shop name as well.",
		"Which singer's songs mention 'Hey'; list them.",
	} {
		got, ok := question.Parse(retrieveSQL(q))
		require.True(t, ok, q)
		require.Equal(t, question.Retrieve, got.Form, q)
		require.Equal(t, q, got.Text, q)
		require.Empty(t, got.More, q)
	}
}
