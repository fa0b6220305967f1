package topo

import (
	"strings"
	"testing"
)

// Counts of one are singular in the import errors.
func TestImportErrorsSingular(t *testing.T) {
	ns3 := []struct{ in, want string }{
		{"2 1 1\n0\n", "t.txt:2: the first line says 1 link, the file has 0"},
		{"3 1 2\n0 1\n", "t.txt:2: the first line says 1 switch, this line lists 2 ids"},
		{"3 2 2\n0\n", "t.txt:2: the first line says 2 switches, this line lists 1 id"},
		{"2 0 1\n0 1 100Gbps 1us 0\n1 0 100Gbps 1us 0\n", "t.txt:3: the first line says 1 link; this is one more"},
		{"2 0 1\n0\n", `t.txt:2: want "a b rate delay error-rate", got 1 field`},
		{"2\n", `t.txt:1: want "nodes switches links" on the first line, got 1 field`},
		{"1 2 0\n", "t.txt:1: 2 switches among 1 node"},
		{"3 0 1\n0 1 100Gbps 1us 0\n", "t.txt:1: 3 nodes cannot be connected by 1 link"},
	}
	for _, c := range ns3 {
		_, err := ParseNS3("t.txt", strings.NewReader(c.in))
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
	csv := []struct{ in, want string }{
		{"node,sw,switch\nnode,h0,host,,srvA\nnode,h1,host,,srvA\nnode,h2,host,,srvB\n" +
			"link,h0,sw,100Gbps,1us\nlink,h1,sw,100Gbps,1us\nlink,h2,sw,100Gbps,1us\n",
			"server srvB has 1 host and server srvA 2"},
		{"node\n", `t.csv:1: want "node,NAME,host[,,SERVER]" or "node,NAME,switch[,TIER]", got 1 field`},
		{"link\n", `t.csv:1: want "link,A,B,RATE,DELAY", got 1 field`},
	}
	for _, c := range csv {
		_, err := ParseCustomCSV("t.csv", strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}
