package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
)

// Output formats accepted by -o.
var outputFormats = []string{"table", "json", "yaml", "csv", "markdown", "html"}

func validateOutput(format string, allowed ...string) error {
	if len(allowed) == 0 {
		allowed = outputFormats
	}
	for _, f := range allowed {
		if f == format {
			return nil
		}
	}
	return usageErrorf("invalid output format %q (want %s)", format, strings.Join(allowed, ", "))
}

// table is a rectangular block of text cells: the table and Markdown
// forms of a command's result (CSV is written from Data: see csv.go). Headers are rendered exactly as written.
type table struct {
	// Title is printed above the table in table and Markdown form.
	Title   string
	Headers []string
	Rows    [][]string
	// Right lists the columns (by index) that are right-aligned (numbers).
	Right []int
	// Notes are lines printed under the table in table and Markdown form.
	Notes []string
	// Optional names the columns hidden first, in this order, when the
	// table is fitted to a narrow terminal (fitTable).
	Optional []string
}

// document is a command's result: Data (a struct with a Schema field) for
// JSON, YAML and CSV (raw values), Tables for the table and Markdown forms
// (which may scale).
type document struct {
	Data   any
	Tables []table
}

// render writes doc to w in the given format. Colouring of cells has
// already been done by the caller (only for the table format).
func render(w io.Writer, format string, st styles, doc document) error {
	switch format {
	case "json":
		return writeJSON(w, doc.Data)
	case "yaml":
		return writeYAML(w, doc.Data)
	case "csv":
		return writeRawCSV(w, doc.Data)
	case "markdown":
		return writeTables(w, doc.Tables, true, st)
	case "html":
		return writeHTML(w, doc)
	default:
		return writeTables(w, doc.Tables, false, st)
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeYAML writes v with the same key names and order as its JSON form.
func writeYAML(w io.Writer, v any) error {
	var buf bytes.Buffer
	if err := writeJSON(&buf, v); err != nil {
		return err
	}
	dec := json.NewDecoder(&buf)
	dec.UseNumber()
	node, err := jsonToYAML(dec)
	if err != nil {
		return err
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(node); err != nil {
		return err
	}
	return enc.Close()
}

// jsonToYAML converts the next JSON value from dec into a yaml node,
// keeping key order and exact numbers.
func jsonToYAML(dec *json.Decoder) (*yaml.Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := kt.(string)
				val, err := jsonToYAML(dec)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, val)
			}
			_, err := dec.Token() // '}'
			return n, err
		case '[':
			n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
			for dec.More() {
				val, err := jsonToYAML(dec)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, val)
			}
			_, err := dec.Token() // ']'
			return n, err
		}
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: t}, nil
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(string(t), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: string(t)}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(t)}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

func writeTables(w io.Writer, tables []table, markdown bool, st styles) error {
	for i, t := range tables {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if t.Title != "" {
			if markdown {
				fmt.Fprintf(w, "### %s\n\n", markdownText(t.Title))
			} else {
				for _, line := range wrapText(sanitizeText(t.Title), st.width) {
					fmt.Fprintln(w, st.Heading(line))
				}
			}
		}
		if !markdown {
			t = fitTable(t, st.width)
		}
		if err := writeTable(w, t, markdown, st); err != nil {
			return err
		}
		if len(t.Notes) > 0 {
			if markdown {
				fmt.Fprintln(w)
			}
			for _, n := range t.Notes {
				if markdown {
					n = markdownText(n)
				}
				fmt.Fprintln(w, sanitizeText(n))
			}
		}
	}
	return nil
}

func writeTable(w io.Writer, t table, markdown bool, st styles) error {
	align := make(tw.Alignment, len(t.Headers))
	for i := range align {
		align[i] = tw.AlignLeft
	}
	for _, c := range t.Right {
		if c >= 0 && c < len(align) {
			align[c] = tw.AlignRight
		}
	}
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithAlignment(align),
	}
	if markdown {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	} else {
		// Plain, kubectl-style columns: easy to read and to grep.
		opts = append(opts, tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenRows: tw.Off, BetweenColumns: tw.On},
				Lines:      tw.Lines{ShowHeaderLine: tw.Off},
			},
		})))
	}
	tbl := tablewriter.NewTable(w, opts...)
	tbl.Header(toAny(t.Headers)...)
	for _, r := range t.Rows {
		r = cleanRow(r, markdown, st)
		if err := tbl.Append(toAny(r)...); err != nil {
			return err
		}
	}
	return tbl.Render()
}

// cleanRow makes a row's cells, which may quote input (kernel map names,
// case strings, environment variables), safe to print: control
// characters are escaped (sanitizeText), except in a status word the
// styles coloured; in Markdown, which GitHub renders as HTML (job
// summaries), HTML is escaped and | too.
func cleanRow(r []string, markdown bool, st styles) []string {
	out := make([]string, len(r))
	for i, c := range r {
		if !st.isStatus(c) {
			c = sanitizeText(c)
		}
		if markdown {
			c = strings.ReplaceAll(markdownText(c), "|", `\|`)
		}
		out[i] = c
	}
	return out
}

// markdownText escapes HTML in Markdown text: a case named
// <img src=x onerror=...> stays text in a rendered job summary. Without
// a < no tag can open, so "->" and "a & b" stay as they are.
func markdownText(s string) string {
	return strings.ReplaceAll(s, "<", "&lt;")
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// outputCompletion completes -o values.
func outputCompletion(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	return outputFormats, cobra.ShellCompDirectiveNoFileComp
}
