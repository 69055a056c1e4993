package search

// isStopWord reports whether a lower-case word says nothing about which
// tool is meant: English function words, and the words a request wraps
// around what it wants ("please", "I need", "can you"). Words that do
// name an action or a direction in tools (on, off, up, down, back, open,
// new, all, first, last, top, next) are not stop words.
func isStopWord(w string) bool {
	switch w {
	case "a", "an", "the", "and", "or", "nor", "but", "if", "then", "else", "so", "than", "that",
		"this", "these", "those", "there", "here", "it", "its", "it's", "itself",
		"of", "to", "in", "into", "at", "by", "for", "from", "with", "without", "within", "about",
		"as", "via", "per", "onto", "upon", "over", "under", "between", "through", "during",
		"is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "doing", "done",
		"has", "have", "had", "having", "will", "would", "shall", "should", "can", "could", "may",
		"might", "must", "i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "you", "your",
		"yours", "he", "him", "his", "she", "her", "hers", "they", "them", "their", "theirs",
		"what", "which", "who", "whom", "whose", "when", "where", "why", "how", "whether",
		"some", "any", "each", "every", "such", "both", "either", "neither", "other", "others",
		"own", "same", "very", "too", "also", "just", "only", "really", "quite", "rather",
		"not", "no", "yes", "please", "want", "wants", "need", "needs", "like", "let", "lets",
		"help", "give", "tell", "something", "anything", "thing", "things", "way", "ll", "ve", "re",
		"im", "don", "doesn", "didn", "isn", "aren", "won", "wouldn", "can't", "cannot", "etc", "eg", "ie":
		return true
	}
	return false
}
