package search_test

import (
	"fmt"

	"github.com/mcpx/mcpx/search"
)

// An index is built over the catalog's capabilities and searched by what
// a model asks for in its own words.
func ExampleIndex_Search() {
	docs := []search.Doc{
		{Name: "fs_read_text_file", Original: "read_text_file", Server: "fs", Description: "Read the complete contents of a file as text."},
		{Name: "fs_list_directory", Original: "list_directory", Server: "fs", Description: "List the files and directories in a path."},
		{Name: "git_log", Original: "log", Server: "git", Description: "Show the commit history of a repository."},
	}
	ix := search.NewBuilder().Build(docs, nil)
	for _, q := range []string{"read text file", "which commits changed it", "directory listing"} {
		r := ix.Search(q, nil)
		if len(r.Hits) > 0 {
			fmt.Printf("%s: %s\n", q, docs[r.Hits[0].Doc].Name)
		}
	}
	// Output:
	// read text file: fs_read_text_file
	// which commits changed it: git_log
	// directory listing: fs_list_directory
}
