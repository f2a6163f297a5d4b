package session

import (
	"context"
	"net/url"
	"sort"
	"time"
)

// HAR is an HTTP Archive 1.2 document.
type HAR struct {
	Log HARLog `json:"log"`
}

// HARLog is the log of a HAR.
type HARLog struct {
	Version string     `json:"version"`
	Creator HARCreator `json:"creator"`
	Pages   []HARPage  `json:"pages"`
	Entries []HAREntry `json:"entries"`
}

// HARCreator names the tool that wrote a HAR.
type HARCreator struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// HARPage is a page of a HAR.
type HARPage struct {
	StartedDateTime string         `json:"startedDateTime"`
	ID              string         `json:"id"`
	Title           string         `json:"title"`
	PageTimings     map[string]int `json:"pageTimings"`
}

// HAREntry is one request and its response.
type HAREntry struct {
	Pageref         string         `json:"pageref"`
	StartedDateTime string         `json:"startedDateTime"`
	Time            float64        `json:"time"`
	Request         HARRequest     `json:"request"`
	Response        HARResponse    `json:"response"`
	Cache           struct{}       `json:"cache"`
	Timings         HARTimings     `json:"timings"`
	ServerIPAddress string         `json:"serverIPAddress,omitempty"`
	Comment         string         `json:"comment,omitempty"`
	Source          map[string]any `json:"_chromekeeper,omitempty"`
}

// HARRequest is the request half of an entry.
type HARRequest struct {
	Method      string      `json:"method"`
	URL         string      `json:"url"`
	HTTPVersion string      `json:"httpVersion"`
	Cookies     []HARNV     `json:"cookies"`
	Headers     []HARNV     `json:"headers"`
	QueryString []HARNV     `json:"queryString"`
	PostData    *HARPosting `json:"postData,omitempty"`
	HeadersSize int         `json:"headersSize"`
	BodySize    int         `json:"bodySize"`
}

// HARPosting is a request body.
type HARPosting struct {
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
}

// HARResponse is the response half of an entry.
type HARResponse struct {
	Status      int        `json:"status"`
	StatusText  string     `json:"statusText"`
	HTTPVersion string     `json:"httpVersion"`
	Cookies     []HARNV    `json:"cookies"`
	Headers     []HARNV    `json:"headers"`
	Content     HARContent `json:"content"`
	RedirectURL string     `json:"redirectURL"`
	HeadersSize int        `json:"headersSize"`
	BodySize    int        `json:"bodySize"`
}

// HARContent is a response body.
type HARContent struct {
	Size     int    `json:"size"`
	MimeType string `json:"mimeType"`
	Text     string `json:"text,omitempty"`
	Comment  string `json:"comment,omitempty"`
}

// HARNV is a name and a value.
type HARNV struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// HARTimings are an entry's phases in ms; -1 when not known.
type HARTimings struct {
	Blocked float64 `json:"blocked"`
	DNS     float64 `json:"dns"`
	Connect float64 `json:"connect"`
	Send    float64 `json:"send"`
	Wait    float64 `json:"wait"`
	Receive float64 `json:"receive"`
}

// maxHARBodies bounds how many response bodies a HAR asks Chrome for.
const maxHARBodies = 200

// HAR builds an HTTP Archive of the page's requests, with text bodies up to
// WatchBodyBytes each while Chrome still has them, headers redacted unless
// redaction is off.
func (c *Call) HAR(ctx context.Context, p *Page, creatorVersion string) HAR {
	reqs := p.net.list(func(r *Request) bool { return !isFavicon(r) })
	sort.SliceStable(reqs, func(i, j int) bool { return reqs[i].Started.Before(reqs[j].Started) })
	started := time.Now()
	if len(reqs) > 0 {
		started = reqs[0].Started
	}
	har := HAR{Log: HARLog{Version: "1.2", Creator: HARCreator{Name: "chromekeeper", Version: creatorVersion},
		Pages:   []HARPage{{StartedDateTime: isoTime(started), ID: p.ID, Title: p.Title(), PageTimings: map[string]int{"onContentLoad": -1, "onLoad": -1}}},
		Entries: []HAREntry{}}}
	bodies := 0
	for _, r := range reqs {
		e := HAREntry{Pageref: p.ID, StartedDateTime: isoTime(r.Started), ServerIPAddress: r.RemoteAddress,
			Timings: HARTimings{Blocked: -1, DNS: -1, Connect: -1, Send: 0, Wait: -1, Receive: -1},
			Source:  map[string]any{"source": r.Source, "initiator": r.Initiator, "resourceType": r.Type}}
		e.Request = HARRequest{Method: r.Method, URL: r.URL, HTTPVersion: "HTTP/1.1", Cookies: []HARNV{},
			Headers: p.harHeaders(r.RequestHeaders), QueryString: queryString(r.URL), HeadersSize: -1, BodySize: len(r.PostData)}
		if r.PostData != "" {
			text, _ := capBody(r.PostData)
			e.Request.PostData = &HARPosting{MimeType: headerValue(r.RequestHeaders, "Content-Type"), Text: text}
		}
		e.Response = HARResponse{Status: r.Status, StatusText: r.StatusText, HTTPVersion: "HTTP/1.1", Cookies: []HARNV{},
			Headers: p.harHeaders(r.ResponseHeaders), RedirectURL: headerValue(r.ResponseHeaders, "Location"),
			HeadersSize: -1, BodySize: int(r.EncodedDataLength),
			Content: HARContent{Size: int(r.EncodedDataLength), MimeType: r.MIMEType}}
		if r.Error != "" {
			e.Comment = r.Error
		}
		if !r.Responded.IsZero() {
			e.Timings.Wait = ms(r.Responded.Sub(r.Started))
			if !r.Finished.IsZero() {
				e.Timings.Receive = ms(r.Finished.Sub(r.Responded))
			}
		}
		if !r.Finished.IsZero() {
			e.Time = ms(r.Finished.Sub(r.Started))
		}
		if textual(r.MIMEType) && r.Status/100 == 2 && bodies < maxHARBodies && r.Initiator == "page" {
			bodies++
			fetch, cancel := context.WithTimeout(ctx, time.Second)
			if body, _, err := responseBody(fetch, p.conn, p.sessionID, r.ID, true); err == nil {
				text, truncated := capBody(body)
				e.Response.Content.Text, e.Response.Content.Size = text, len(body)
				if truncated {
					e.Response.Content.Comment = "truncated to 10 KB"
				}
			}
			cancel()
		}
		har.Log.Entries = append(har.Log.Entries, e)
	}
	return har
}

func (p *Page) harHeaders(h map[string]string) []HARNV {
	if p.origin.redact {
		h = Redact(h)
	}
	out := make([]HARNV, 0, len(h))
	for k, v := range h {
		out = append(out, HARNV{Name: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func queryString(raw string) []HARNV {
	out := []HARNV{}
	u, err := url.Parse(raw)
	if err != nil {
		return out
	}
	for k, vs := range u.Query() {
		for _, v := range vs {
			out = append(out, HARNV{Name: k, Value: v})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func isoTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
