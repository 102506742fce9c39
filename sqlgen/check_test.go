package sqlgen

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/proxy"
)

// TestRewordForPeople: the checks' messages, written for the LLM's SQL,
// speak of the SQL a person gave when ValidateOnSession reports them; the
// SQLSTATE and other errors are unchanged.
func TestRewordForPeople(t *testing.T) {
	_, err := Check("DELETE FROM t")
	var pe *proxy.Error
	require.ErrorAs(t, reword(err), &pe)
	require.Equal(t, CodeNotReadOnly, pe.Code)
	require.Equal(t, "the SQL is not a single read-only SELECT: it is a DELETE statement", pe.Message)

	_, err = Check("")
	require.ErrorAs(t, reword(err), &pe)
	require.Equal(t, "no SQL statement given", pe.Message)

	ue := &proxy.UpstreamError{Code: "42501", Message: "permission denied for table t"}
	require.Same(t, ue, reword(ue))
	plain := errors.New("x")
	require.Equal(t, plain, reword(plain))
}
