package e2e

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// jdbcJar is Debian's libpostgresql-jdbc-java driver.
const jdbcJar = "/usr/share/java/postgresql.jar"

// jdbcProgram runs questions as a BI tool does: a PreparedStatement
// (extended protocol; the driver asks for the row description and reads
// ResultSetMetaData) and a plain Statement, each repeated past the driver's
// prepareThreshold (5) so it switches to a named server-side statement.
const jdbcProgram = `
import java.sql.*;

public class NLClient {
    public static void main(String[] args) throws Exception {
        try (Connection c = DriverManager.getConnection(args[0])) {
            for (int i = 0; i < 6; i++) {
                try (PreparedStatement ps = c.prepareStatement("-- Metabase:: userID: 1 queryType: native\n/* nl: How many orders per country? */")) {
                    try (ResultSet rs = ps.executeQuery()) {
                        ResultSetMetaData md = rs.getMetaData();
                        StringBuilder sb = new StringBuilder("prepared " + i + " cols=" + md.getColumnCount());
                        for (int k = 1; k <= md.getColumnCount(); k++) sb.append(" ").append(md.getColumnName(k)).append(":").append(md.getColumnTypeName(k));
                        System.out.println(sb);
                        while (rs.next()) System.out.println("row " + rs.getString(1) + " " + rs.getLong(2) + " " + rs.getBigDecimal(3));
                    }
                }
            }
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("/* nl: customer names */")) {
                while (rs.next()) System.out.println("name " + rs.getString("name"));
                SQLWarning w = st.getWarnings();
                System.out.println("warning " + (w == null ? "none" : w.getMessage().split("\n")[0]));
            }
            try (Statement st = c.createStatement()) {
                st.executeQuery("/* nl: drop the orders */");
                System.out.println("no error");
            } catch (SQLException e) {
                System.out.println("error " + e.getSQLState());
            }
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT 'alive'")) {
                rs.next();
                System.out.println(rs.getString(1));
            }
        }
    }
}
`

func TestNLJDBC(t *testing.T) {
	if _, err := os.Stat(jdbcJar); err != nil {
		t.Fatalf("JDBC driver missing (apt-get install libpostgresql-jdbc-java): %v", err)
	}
	for _, tool := range []string{"javac", "java"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not installed (apt-get install default-jdk-headless): %v", tool, err)
		}
	}
	e := startNL(t, nlOpts{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "NLClient.java"), []byte(jdbcProgram), 0o644))
	out, err := exec.CommandContext(ctx, "javac", "-cp", jdbcJar, "-d", dir, filepath.Join(dir, "NLClient.java")).CombinedOutput()
	require.NoError(t, err, "javac: %s", out)

	u, err := url.Parse(e.dsn(t))
	require.NoError(t, err)
	jdbcURL := "jdbc:postgresql://" + u.Host + u.Path + "?user=postgres&sslmode=disable"
	out, err = exec.CommandContext(ctx, "java", "-cp", jdbcJar+":"+dir, "NLClient", jdbcURL).CombinedOutput()
	require.NoError(t, err, "java: %s", out)
	s := string(out)
	t.Log(s)
	for i := range 6 {
		require.Contains(t, s, "prepared "+string(rune('0'+i))+" cols=3 country:text orders:int8 revenue:numeric")
	}
	require.Equal(t, 6, strings.Count(s, "row Aruba 20 3200.00"))
	require.Equal(t, 6, strings.Count(s, "row Chile 10 1450.00"))
	require.Contains(t, s, "name Ann\nname Bob\nname Cy\n")
	require.Contains(t, s, "warning atrium: tables: shop.")
	require.Contains(t, s, "error 0A000")
	require.Contains(t, s, "alive")
	require.Equal(t, 5, e.llm.Calls(), "one generation per question: 1 + 1 + 3 rounds for the DDL one")
}
