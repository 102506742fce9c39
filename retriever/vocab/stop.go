package vocab

// Stop reports whether a lower-case word carries no schema meaning in a
// question: English function words and the verbs and nouns questions are
// phrased with ("show", "list", "find", "give", "name" is NOT one: it is a
// column). Expansions of stop words are noise; callers skip them.
func Stop(word string) bool {
	switch word {
	case "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and",
		"any", "are", "as", "at", "be", "because", "been", "before", "being", "below",
		"between", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "done",
		"down", "during", "each", "either", "else", "ever", "every", "few", "for", "from",
		"further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself",
		"him", "himself", "his", "how", "however", "i", "if", "in", "into", "is", "it", "its",
		"itself", "just", "let", "may", "me", "might", "more", "most", "much", "must", "my",
		"myself", "neither", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or",
		"other", "others", "our", "ours", "ourselves", "out", "over", "own", "per", "please",
		"same", "shall", "she", "should", "so", "some", "such", "than", "that", "the", "their",
		"theirs", "them", "themselves", "then", "there", "these", "they", "this", "those",
		"through", "to", "too", "under", "until", "up", "upon", "us", "very", "was", "we",
		"were", "what", "whatever", "when", "where", "whether", "which", "while", "who",
		"whom", "whose", "why", "will", "with", "within", "without", "would", "yet", "you",
		"your", "yours", "yourself", "yourselves",
		// Question phrasing.
		"give", "show", "list", "find", "tell", "display", "return", "returns", "get",
		"many", "whats", "s", "t", "along", "together", "respectively",
		"corresponding", "different", "distinct", "know", "want", "like":
		return true
	}
	return false
}
