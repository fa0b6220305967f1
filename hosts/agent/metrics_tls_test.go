package agent

import (
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// bearer lets through the token under a scheme in any case, and counts
// and refuses the rest with a challenge.
func TestBearer(t *testing.T) {
	refused := 0
	h := bearer([]byte("scrape-scrape-scrape-1"), func() { refused++ }, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
	}))
	for auth, want := range map[string]int{
		"Bearer scrape-scrape-scrape-1":  http.StatusOK,
		"bearer scrape-scrape-scrape-1":  http.StatusOK,
		"BEARER scrape-scrape-scrape-1":  http.StatusOK,
		"":                               http.StatusUnauthorized,
		"Bearer":                         http.StatusUnauthorized,
		"Bearer scrape-scrape-scrape-":   http.StatusUnauthorized,
		"Bearer scrape-scrape-scrape-12": http.StatusUnauthorized,
		"Basic scrape-scrape-scrape-1":   http.StatusUnauthorized,
		"Bearer  scrape-scrape-scrape-1": http.StatusUnauthorized,
	} {
		req := httptest.NewRequest("GET", "/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Authorization %q: %d, want %d", auth, rec.Code, want)
		}
		if want == http.StatusUnauthorized && rec.Header().Get("WWW-Authenticate") == "" {
			t.Errorf("Authorization %q: 401 without a challenge", auth)
		}
	}
	if refused != 6 {
		t.Errorf("%d refusals counted, want 6", refused)
	}
}

// The ephemeral certificate names loopback and the listen address, each
// once.
func TestSelfSignedNames(t *testing.T) {
	for listen, want := range map[string]string{
		"127.0.0.1:7470": "127.0.0.1 ::1",
		"[::1]:7470":     "127.0.0.1 ::1",
		"10.0.0.5:7470":  "127.0.0.1 ::1 10.0.0.5",
		"0.0.0.0:7470":   "127.0.0.1 ::1",
	} {
		cert, err := selfSigned(listen)
		if err != nil {
			t.Fatal(err)
		}
		c, err := x509.ParseCertificate(cert.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ip := range c.IPAddresses {
			got = append(got, ip.String())
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s: IP names %v, want %s", listen, got, want)
		}
	}
}
