package agent

import (
	"net/http"
	"net/http/httptest"
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
