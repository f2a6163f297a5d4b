package check

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable writes the report for a human: one row per check, the evidence
// indented under it, and a summary line.
func WriteTable(w io.Writer, r *Report) error {
	fmt.Fprintf(w, "chromekeeper check %s\n\n", r.URL)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tRESULT\tSUMMARY")
	for _, c := range r.Checks {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, strings.ToUpper(c.Status), c.Summary)
		for _, e := range c.Evidence {
			fmt.Fprintf(tw, "\t\t  %s\n", e)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	pass, fail, skip := r.counts()
	verdict := "PASSED"
	if !r.Passed {
		verdict = "FAILED"
	}
	_, err := fmt.Fprintf(w, "\n%s: %d passed, %d failed, %d skipped in %.1fs\n", verdict, pass, fail, skip, r.Seconds)
	return err
}

// WriteJSON writes the report as JSON.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func (r *Report) counts() (pass, fail, skip int) {
	for _, c := range r.Checks {
		switch c.Status {
		case Pass:
			pass++
		case Fail:
			fail++
		default:
			skip++
		}
	}
	return pass, fail, skip
}

// The JUnit XML shape CI systems read: testsuites > testsuite > testcase,
// with failure and skipped children and the evidence as system-out.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML.
func WriteJUnit(w io.Writer, r *Report) error {
	_, fail, skip := r.counts()
	suite := junitSuite{Name: "chromekeeper check " + r.URL, Tests: len(r.Checks), Failures: fail, Skipped: skip,
		Time: fmt.Sprintf("%.3f", r.Seconds)}
	for _, c := range r.Checks {
		tc := junitCase{Name: c.Name, ClassName: "chromekeeper.check", Time: fmt.Sprintf("%.3f", c.Seconds),
			SystemOut: strings.Join(c.Evidence, "\n")}
		switch c.Status {
		case Fail:
			tc.Failure = &junitMessage{Message: c.Summary, Text: strings.Join(c.Evidence, "\n")}
		case Skip:
			tc.Skipped = &junitMessage{Message: c.Summary}
		}
		suite.Cases = append(suite.Cases, tc)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Suites: []junitSuite{suite}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
