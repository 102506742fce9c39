// Command catalogbench measures `atrium catalog sync` on a synthetic
// database: it creates N tables (varied names, 5-40 columns, foreign keys, a
// few rows each) in a throwaway database, then times a cold sync and a
// no-change re-sync with the chosen built-in embedder (-embedder builtin,
// the default, or words) and reports tables per second and peak memory.
// run.sh runs it at 10,000 and 100,000 tables.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/atriumdb/atrium/catalog"
	"github.com/atriumdb/atrium/migrations"
	"github.com/atriumdb/atrium/retriever/vocab"
)

var words = strings.Fields(`customer order invoice payment product supplier warehouse shipment employee department
	account ledger branch region country city address contact campaign event ticket flight airport airline booking
	hotel room guest review rating course student teacher enrollment exam grade patient doctor visit prescription
	drug claim policy vehicle driver route stop station sensor reading device firmware release build artifact`)

var colWords = strings.Fields(`name code status amount total price quantity created updated note description email phone
	score level rank weight height start end due paid balance currency category label title comment flag count ratio`)

func main() {
	n := flag.Int("tables", 10000, "tables to synthesise")
	perSchema := flag.Int("per-schema", 100, "tables per schema")
	rows := flag.Int("rows", 3, "rows per table")
	viewEvery := flag.Int("view-every", 0, "make every Nth relation a view over the table before it (0: none); views cost the server no data files, which keeps a 100,000-relation run within reach of a slow disk")
	admin := flag.String("admin-dsn", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "server to create the throwaway database on")
	keep := flag.Bool("keep", false, "keep the database afterwards")
	dsn := flag.String("dsn", "", "sync this existing database (then re-sync it) instead of synthesising one")
	force := flag.Bool("force", false, "with -dsn: rebuild every table")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the syncs to this file")
	embedder := flag.String("embedder", vocab.DefaultEmbedderKind, "built-in embedder the catalog is synced with: builtin or words (docs/retrieval.md)")
	flag.Parse()
	// The model-backed kinds need a model file or an endpoint, which this
	// bench does not take; it measures what ships in the binary.
	if k := strings.ToLower(*embedder); k != "builtin" && k != vocab.EmbedderWords {
		fmt.Fprintf(os.Stderr, "catalogbench: -embedder %q: want builtin or %s\n", *embedder, vocab.EmbedderWords)
		os.Exit(2)
	}
	emb, err := vocab.NewEmbedder(catalog.EmbedderConfig{Kind: *embedder})
	if err != nil {
		fmt.Fprintln(os.Stderr, "catalogbench:", err)
		os.Exit(1)
	}
	fmt.Printf("embedder:     %s (%d dimensions)\n", emb.Name(), emb.Dimension())
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "catalogbench:", err)
			os.Exit(1)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "catalogbench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if *dsn != "" {
		if err := resync(*dsn, *force, emb); err != nil {
			fmt.Fprintln(os.Stderr, "catalogbench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*admin, *n, *perSchema, *rows, *viewEvery, *keep, emb); err != nil {
		fmt.Fprintln(os.Stderr, "catalogbench:", err)
		os.Exit(1)
	}
}

func run(adminDSN string, n, perSchema, rows, viewEvery int, keep bool, emb catalog.Embedder) error {
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		return err
	}
	defer admin.Close(ctx)
	var b [4]byte
	_, _ = rand.Read(b[:])
	db := "atrium_bench_catalog_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		return err
	}
	if !keep {
		defer admin.Exec(context.Background(), "DROP DATABASE "+db+" WITH (FORCE)") //nolint:errcheck
	}
	u, _ := url.Parse(adminDSN)
	u.Path = "/" + db
	pool, err := pgxpool.New(ctx, u.String())
	if err != nil {
		return err
	}
	defer pool.Close()

	t0 := time.Now()
	if err := synthesise(ctx, pool, n, perSchema, rows, viewEvery); err != nil {
		return fmt.Errorf("synthesise: %w", err)
	}
	if _, err := pool.Exec(ctx, "ANALYZE"); err != nil {
		return err
	}
	views := "no views"
	if viewEvery > 0 {
		views = fmt.Sprintf("one in %d a view", viewEvery)
	}
	fmt.Printf("synthesised %d relations (%d per schema, %d rows each, %s) in %s\n", n, perSchema, rows, views, time.Since(t0).Round(time.Second))
	if _, err := migrations.Up(ctx, pool, migrations.Options{}); err != nil {
		return err
	}

	var peakHeap uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peakHeap = max(peakHeap, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	cpu0, srv0 := clientCPU(), serverCPU(ctx, pool)
	cold := time.Now()
	st, err := catalog.Sync(ctx, pool, catalog.SyncOptions{Embedder: emb})
	if err != nil {
		return fmt.Errorf("cold sync: %w", err)
	}
	coldD := time.Since(cold)
	cpu1, srv1 := clientCPU(), serverCPU(ctx, pool)
	warm := time.Now()
	st2, err := catalog.Sync(ctx, pool, catalog.SyncOptions{Embedder: emb})
	if err != nil {
		return fmt.Errorf("re-sync: %w", err)
	}
	warmD := time.Since(warm)
	close(stop)
	wg.Wait()

	var edgesFK, edgesInf int64
	_ = pool.QueryRow(ctx, "SELECT count(*) FILTER (WHERE source = 'foreign_key'), count(*) FILTER (WHERE source = 'inferred') FROM atrium.join_edges").Scan(&edgesFK, &edgesInf)
	fmt.Printf("cold sync:    %d tables in %s = %.0f tables/s (goal >= 500)\n", st.Rebuilt, coldD.Round(time.Millisecond), float64(st.Rebuilt)/coldD.Seconds())
	fmt.Printf("re-sync:      %d unchanged, %d rebuilt in %s (goal < 5s for 10k) = %.0f tables/s\n", st2.Unchanged, st2.Rebuilt, warmD.Round(time.Millisecond), float64(st2.Unchanged)/warmD.Seconds())
	fmt.Printf("ratio:        re-sync takes %.3f of a cold sync\n", warmD.Seconds()/coldD.Seconds())
	fmt.Printf("join edges:   %d foreign_key, %d inferred\n", edgesFK, edgesInf)
	var srv float64
	for pid, t := range srv1 {
		srv += t - srv0[pid]
	}
	var load string
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	perTable := (cpu1 - cpu0 + srv) / float64(st.Rebuilt)
	fmt.Printf("cold CPU:     client %.1fs + server backends %.1fs = %.2f ms per table; on %d idle cores that is about %.0f tables/s (load average now %s)\n",
		cpu1-cpu0, srv, perTable*1000, runtime.NumCPU(), float64(runtime.NumCPU())/perTable, load)
	fmt.Printf("memory:       peak Go heap in use %.1f MiB, peak RSS %s\n", float64(peakHeap)/(1<<20), peakRSS())
	return nil
}

// resync syncs an existing database's catalog (cold when it has none, with
// -force a full rebuild) and then again with nothing changed.
func resync(dsn string, force bool, emb catalog.Embedder) error {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return err
	}
	defer pool.Close()
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'v', 'm', 'f', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'atrium')
		  AND n.nspname NOT LIKE 'pg\_toast%'`).Scan(&n); err != nil {
		return err
	}
	fmt.Printf("existing database with %d relations\n", n)
	cpu0, srv0 := clientCPU(), serverCPU(ctx, pool)
	t0 := time.Now()
	st, err := catalog.Sync(ctx, pool, catalog.SyncOptions{AutoMigrate: true, Force: force, Embedder: emb})
	if err != nil {
		return err
	}
	d := time.Since(t0)
	cpu1, srv1 := clientCPU(), serverCPU(ctx, pool)
	t1 := time.Now()
	st2, err := catalog.Sync(ctx, pool, catalog.SyncOptions{Embedder: emb})
	if err != nil {
		return err
	}
	d2 := time.Since(t1)
	var srv float64
	for pid, t := range srv1 {
		srv += t - srv0[pid]
	}
	fmt.Printf("sync:         %d rebuilt in %s = %.0f tables/s (client CPU %.1fs, server backends %.1fs)\n",
		st.Rebuilt, d.Round(time.Millisecond), float64(st.Rebuilt)/d.Seconds(), cpu1-cpu0, srv)
	fmt.Printf("re-sync:      %d unchanged, %d rebuilt in %s\n", st2.Unchanged, st2.Rebuilt, d2.Round(time.Millisecond))
	fmt.Printf("memory:       peak RSS %s\n", peakRSS())
	return nil
}

// clientCPU is this process's user+system CPU seconds.
func clientCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// serverCPU is the CPU seconds used so far by the server backend of each
// pooled connection (the server is on this machine in the benchmark set-up).
func serverCPU(ctx context.Context, pool *pgxpool.Pool) map[uint32]float64 {
	out := map[uint32]float64{}
	for _, c := range pool.AcquireAllIdle(ctx) {
		pid := c.Conn().PgConn().PID()
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			f := strings.Fields(string(b))
			if len(f) > 15 {
				var ut, st float64
				fmt.Sscan(f[13], &ut)
				fmt.Sscan(f[14], &st)
				out[pid] = (ut + st) / 100 // USER_HZ
			}
		}
		c.Release()
	}
	return out
}

// peakRSS reads VmHWM, the process's peak resident set.
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:"))
		}
	}
	return "unknown"
}

// synthesise creates the schemas on two connections, one transaction per
// schema (the lock table bounds how many tables one transaction may create).
func synthesise(ctx context.Context, pool *pgxpool.Pool, n, perSchema, rows, viewEvery int) error {
	schemas := int(math.Ceil(float64(n) / float64(perSchema)))
	jobs := make(chan int)
	errs := make(chan error, 2)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range jobs {
				count := min(perSchema, n-s*perSchema)
				if _, err := pool.Exec(ctx, schemaScript(s, count, rows, viewEvery), pgx.QueryExecModeSimpleProtocol); err != nil {
					errs <- fmt.Errorf("schema %d: %w", s, err)
					return
				}
			}
		}()
	}
	start := time.Now()
	for s := range schemas {
		select {
		case jobs <- s:
		case err := <-errs:
			close(jobs)
			wg.Wait()
			return err
		}
		if s%50 == 49 {
			fmt.Fprintf(os.Stderr, "\rsynthesised %d/%d schemas (%.0f tables/s)", s+1, schemas, float64((s+1)*perSchema)/time.Since(start).Seconds())
		}
	}
	close(jobs)
	wg.Wait()
	fmt.Fprintln(os.Stderr)
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

func schemaScript(s, count, rows, viewEvery int) string {
	r := mrand.New(mrand.NewPCG(uint64(s), 42))
	var sb strings.Builder
	schema := fmt.Sprintf("%s_%s_%d", words[r.IntN(len(words))], words[r.IntN(len(words))], s)
	fmt.Fprintf(&sb, "BEGIN; CREATE SCHEMA %s; SET LOCAL search_path = %s;\n", schema, schema)
	var tables []string
	for i := range count {
		name := fmt.Sprintf("%s_%s_%d", words[r.IntN(len(words))], words[r.IntN(len(words))], i)
		if viewEvery > 0 && i%viewEvery == viewEvery-1 && len(tables) > 0 {
			fmt.Fprintf(&sb, "CREATE VIEW %s_view AS SELECT * FROM %s;\n", name, tables[len(tables)-1])
			continue
		}
		ncols := 5 + r.IntN(36)
		cols := []string{"id integer PRIMARY KEY"}
		types := []string{"int"}
		var fks []string
		for j := 1; j < ncols; j++ {
			if j <= 2 && len(tables) > 0 && r.IntN(2) == 0 {
				ref := tables[r.IntN(len(tables))]
				cname := fmt.Sprintf("%s_id_%d", ref, j)
				cols = append(cols, cname+" integer")
				fks = append(fks, fmt.Sprintf("FOREIGN KEY (%s) REFERENCES %s(id)", cname, ref))
				types = append(types, "fk")
				continue
			}
			w := colWords[r.IntN(len(colWords))]
			switch r.IntN(4) {
			case 0:
				cols = append(cols, fmt.Sprintf("%s_%d integer", w, j))
				types = append(types, "int")
			case 1:
				cols = append(cols, fmt.Sprintf("%s_%d numeric(10,2)", w, j))
				types = append(types, "num")
			case 2:
				cols = append(cols, fmt.Sprintf("%s_%d date", w, j))
				types = append(types, "date")
			default:
				cols = append(cols, fmt.Sprintf("%s_%d text", w, j))
				types = append(types, "text")
			}
		}
		fmt.Fprintf(&sb, "CREATE TABLE %s (%s);\n", name, strings.Join(append(cols, fks...), ", "))
		if r.IntN(4) == 0 {
			fmt.Fprintf(&sb, "COMMENT ON TABLE %s IS 'All %s records of the %s team';\n", name, words[r.IntN(len(words))], words[r.IntN(len(words))])
		}
		if rows > 0 {
			var vals []string
			for k := 1; k <= rows; k++ {
				var v []string
				for _, t := range types {
					switch t {
					case "int", "fk":
						v = append(v, fmt.Sprint(k))
					case "num":
						v = append(v, fmt.Sprintf("%d.%02d", r.IntN(1000), r.IntN(100)))
					case "date":
						v = append(v, fmt.Sprintf("'2024-%02d-%02d'", 1+r.IntN(12), 1+r.IntN(28)))
					default:
						v = append(v, fmt.Sprintf("'%s %s %d'", words[r.IntN(len(words))], colWords[r.IntN(len(colWords))], r.IntN(100)))
					}
				}
				vals = append(vals, "("+strings.Join(v, ", ")+")")
			}
			fmt.Fprintf(&sb, "INSERT INTO %s VALUES %s;\n", name, strings.Join(vals, ", "))
		}
		tables = append(tables, name)
	}
	sb.WriteString("COMMIT;\n")
	return sb.String()
}
