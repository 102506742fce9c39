package question

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/retriever"
	"github.com/atriumdb/atrium/sqlgen"
)

// deadlineRetriever records whether the retrieval's context had a
// deadline, and how far.
type deadlineRetriever struct {
	Retriever
	left []time.Duration // -1: none
}

func (r *deadlineRetriever) RetrieveAsk(ctx context.Context, a retriever.Ask) (*retriever.Result, error) {
	left := time.Duration(-1)
	if dl, ok := ctx.Deadline(); ok {
		left = time.Until(dl)
	}
	r.left = append(r.left, left)
	return r.Retriever.RetrieveAsk(ctx, a)
}

// TestRetrieveDeadline: a RETRIEVE runs under the generation deadline
// (GenerateTimeout) even when the session's context has none, as an nl
// question's retrieval does.
func TestRetrieveDeadline(t *testing.T) {
	e := newEnv(t, envOpts{noLLM: true})
	dr := &deadlineRetriever{Retriever: e.ret}
	const limit = 7 * time.Second
	h, err := New(Config{NL: sqlgen.Config{GenerateTimeout: limit}}, Options{Retriever: dr})
	require.NoError(t, err)
	ctx := context.Background()
	st, err := h.Intercept(ctx, proxy.SessionInfo{}, "RETRIEVE customers in Aruba")
	require.NoError(t, err)
	_, err = st.Execute(ctx, nil, &rowSink{})
	require.NoError(t, err)
	require.Len(t, dr.left, 1)
	require.True(t, dr.left[0] >= 0, "RETRIEVE's retrieval ran without a deadline")
	require.LessOrEqual(t, dr.left[0], limit)
}
