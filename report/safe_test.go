package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"fabriclab/metrics"
)

func hostileOutput() Output {
	return Output{Scenario: "s", Variants: []VariantResult{{
		Name: "=HYPERLINK(\"http://x\",\"y\")", Collective: "alltoall\x1b]0;t\a",
		Sweep: Point{{Key: "workload.qps", Value: "@SUM(1)"}},
		Results: []metrics.SizeResult{
			{Completion: metrics.Completion{SizeBytes: 1 << 20, Ranks: 4, Timing: metrics.Timing{CCTS: 1e-3}}, Outcome: metrics.Outcome{Complete: true}, Jobs: []metrics.JobResult{
				{Name: "+cmd|' /C calc'!A0", Kind: "alltoall"}, {Name: "-2+3\r\n# variant: forged", Kind: "incast"},
			}},
			{Completion: metrics.Completion{SizeBytes: 2 << 20}, Outcome: metrics.Outcome{Error: "boom\x1b[2J"}},
		},
	}}}
}

// TestCSVNeutralizesFormulas: a name that a spreadsheet would evaluate
// reaches it as text (issue 10, item 10).
func TestCSVNeutralizesFormulas(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCSV(&b, hostileOutput()); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows[1:] {
		for c, cell := range row {
			if strings.ContainsAny(cell, "\x1b\u009b") {
				t.Errorf("column %s: cell %q has a terminal escape", CSVHeader[c], cell)
			}
			if cell != "" && strings.ContainsRune("=+@\t\r", rune(cell[0])) {
				t.Errorf("column %s: cell %q starts a formula", CSVHeader[c], cell)
			}
			if col := CSVHeader[c]; (col == "variant" || col == "job" || col == "sweep") && cell != "" && cell[0] == '-' {
				t.Errorf("column %s: cell %q starts a formula", col, cell)
			}
		}
	}
	if got := rows[1][0]; got != `'=HYPERLINK("http://x","y")` {
		t.Errorf("variant cell %q", got)
	}
	if got := rows[2][18]; got != "'-2+3\n# variant: forged" { // the CSV reader reads \r\n as \n
		t.Errorf("second job cell %q", got)
	}
}

// TestTablesEscapeControlCharacters: names from a file or a database cannot
// clear the screen or forge a table line (issue 10, item 11).
func TestTablesEscapeControlCharacters(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTables(&b, hostileOutput()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsAny(out, "\x1b\a\r") {
		t.Errorf("control characters reach the terminal:\n%q", out)
	}
	if strings.Count("\n"+out, "\n# variant:") != 1 {
		t.Errorf("a name forged a variant line:\n%s", out)
	}
	for _, want := range []string{`alltoall\x1b]0;t\a`, `boom\x1b[2J`, `\r\n# variant: forged`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks the escaped %q:\n%s", want, out)
		}
	}
	var c bytes.Buffer
	if err := WriteCompare(&c, []Column{{Name: "1:a\x1b[2J", Results: hostileOutput().Variants[0].Results}}, "busbw"); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsRune(c.String(), '\x1b') {
		t.Errorf("compare prints a raw ESC:\n%q", c.String())
	}
}
