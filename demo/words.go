package demo

import "cmp"

// The vocabulary of the demo catalog: who is in the shot, where, doing
// what, in which mood, and how it was filmed, in the words real UGC B-roll
// listings use. Activities never name their place, because titles put the
// place after them.

type demoPlace struct {
	name       string   // the location facet
	at         []string // where, as it follows a verb phrase
	activities []string
	tags       []string
}

type demoMood struct {
	reactions []string // verb phrases showing the emotion
	tail      string   // follows a comma at the end of a title
	sentence  string   // for the description
	tags      []string
}

type demoModel struct {
	id, name, gender, age string
}

type demoWords struct {
	subjects map[string][][]string // gender -> age range index -> subjects
	places   []demoPlace
	moods    map[string]demoMood
	light    []string
	uses     []string
	models   []demoModel
}

func newDemoWords() demoWords {
	return demoWords{
		subjects: map[string][][]string{
			"female": {
				{"Young woman", "College student", "Young woman in a hoodie"},
				{"Woman", "Woman in her late twenties", "Young professional woman"},
				{"Woman in her late thirties", "Mom", "Woman in her early forties"},
				{"Middle-aged woman", "Woman in her late forties", "Mother of teenagers"},
				{"Older woman", "Grandmother", "Woman in her sixties"},
			},
			"male": {
				{"Young man", "College student", "Young man in a cap"},
				{"Man", "Man in his late twenties", "Young professional man"},
				{"Man in his late thirties", "Dad", "Man in his early forties"},
				{"Middle-aged man", "Man in his late forties", "Bearded middle-aged man"},
				{"Older man", "Grandfather", "Man in his sixties"},
			},
			"non_binary": {
				{"Young non-binary person", "Non-binary student"},
				{"Non-binary person", "Non-binary creator in their late twenties"},
				{"Non-binary person in their late thirties", "Non-binary parent"},
				{"Middle-aged non-binary person", "Non-binary person in their late forties"},
				{"Older non-binary person", "Non-binary person in their sixties"},
			},
		},
		places: []demoPlace{
			{"home", []string{"on the couch", "in the living room", "at home"},
				[]string{"scrolling on a phone", "unboxing a package", "watching TV", "video-calling a friend"},
				[]string{"couch", "living room", "cozy", "lifestyle"}},
			{"kitchen", []string{"in the kitchen", "at the kitchen counter"},
				[]string{"cooking pasta", "tasting a smoothie", "making coffee", "opening the fridge"},
				[]string{"cooking", "food", "coffee", "morning routine"}},
			{"car", []string{"in the car", "in the driver's seat", "in a parked car"},
				[]string{"driving at night", "singing along to the radio", "filming a selfie video", "stuck in traffic"},
				[]string{"driving", "road trip", "commute", "night"}},
			{"office", []string{"at the office", "at a desk", "in a meeting room"},
				[]string{"typing on a laptop", "on a video call", "reading an email", "presenting to the team"},
				[]string{"work", "laptop", "business", "remote work"}},
			{"street", []string{"on a busy street", "on a city sidewalk", "at a crosswalk"},
				[]string{"walking and talking to camera", "checking a map on the phone", "waiting for the bus", "vlogging downtown"},
				[]string{"city", "urban", "walking", "vlog"}},
			{"cafe", []string{"in a cafe", "at a coffee shop window seat"},
				[]string{"sipping a latte", "working on a laptop", "chatting over coffee", "reading the menu"},
				[]string{"coffee", "cafe", "latte", "casual"}},
			{"park", []string{"in the park", "on a park bench", "on the grass in the park"},
				[]string{"walking a dog", "having a picnic", "jogging", "reading a book"},
				[]string{"outdoors", "nature", "dog", "sunny"}},
			{"gym", []string{"at the gym", "in a fitness studio"},
				[]string{"lifting weights", "stretching on a yoga mat", "drinking from a water bottle", "finishing a workout"},
				[]string{"fitness", "workout", "health", "sport"}},
			{"beach", []string{"on the beach", "by the ocean at sunset"},
				[]string{"walking barefoot in the sand", "putting on sunscreen", "watching the waves", "taking a selfie"},
				[]string{"beach", "summer", "vacation", "ocean"}},
			{"bedroom", []string{"in bed", "in the bedroom", "on the edge of the bed"},
				[]string{"waking up and checking the phone", "doing a skincare routine", "journaling", "getting ready in front of the mirror"},
				[]string{"bedroom", "morning", "skincare", "self care"}},
			{"supermarket", []string{"in a grocery store", "at the supermarket"},
				[]string{"comparing prices", "picking fresh fruit", "pushing a shopping cart", "reading a label"},
				[]string{"shopping", "groceries", "retail", "budget"}},
		},
		moods: map[string]demoMood{
			"neutral": {[]string{"looking at the camera", "sipping coffee calmly", "listening quietly"},
				"calm and natural", "Relaxed, natural expression with no big reaction.", []string{"calm", "natural", "everyday"}},
			"happy": {[]string{"smiling at the camera", "smiling while reading a text", "grinning"},
				"all smiles", "Warm, genuine smile throughout.", []string{"smile", "joy", "positive"}},
			"playful": {[]string{"making funny faces at the camera", "dancing around", "winking at the camera"},
				"playful mood", "Goofy, playful energy.", []string{"fun", "silly", "dance"}},
			"confident": {[]string{"speaking confidently to camera", "giving a thumbs up", "walking with confidence"},
				"confident energy", "Self-assured body language, strong eye contact.", []string{"confidence", "empowered", "testimonial"}},
			"surprised": {[]string{"reacting to a surprise", "raising eyebrows in surprise", "opening a surprise gift"},
				"surprised reaction", "A clear moment of surprise.", []string{"surprise", "reaction", "unexpected"}},
			"confused": {[]string{"scratching their head in confusion", "looking puzzled at a phone", "shrugging"},
				"confused look", "Puzzled expression, as if something does not add up.", []string{"confused", "question", "problem"}},
			"shocked": {[]string{"gasping in shock", "covering their mouth in shock", "staring at the screen in disbelief"},
				"shocked reaction", "Jaw-drop, can't-believe-it reaction.", []string{"shock", "omg", "reaction"}},
			"laughing": {[]string{"laughing at a phone", "laughing out loud", "cracking up at a joke"},
				"laughing hard", "Real, unscripted laughter.", []string{"laugh", "funny", "lol"}},
			"curious": {[]string{"peeking into a box", "leaning in curiously", "reading something intriguing"},
				"curious look", "Leaning in with curiosity.", []string{"curious", "discovery", "interest"}},
			"amazed": {[]string{"watching in amazement", "looking amazed at the results", "mouthing wow"},
				"amazed reaction", "Wide-eyed amazement.", []string{"wow", "amazing", "awe"}},
			"excited": {[]string{"jumping with excitement", "celebrating a win", "cheering with fists in the air"},
				"excited reaction", "High-energy excitement, great for hooks.", []string{"excited", "celebration", "win"}},
			"sad": {[]string{"staring out the window, sad", "wiping away a tear", "sighing in disappointment"},
				"sad moment", "Quiet, downcast moment.", []string{"sad", "emotional", "disappointed"}},
			"angry": {[]string{"arguing on the phone", "frowning at a laptop", "slamming a notebook shut"},
				"frustrated and angry", "Visible frustration and anger.", []string{"angry", "frustrated", "stress"}},
		},
		light: []string{"Natural daylight.", "Warm indoor lighting.", "Soft window light.",
			"Moody low light.", "Golden-hour glow.", "Bright, even light."},
		uses: []string{
			"Works as a scroll-stopping hook for UGC ads.",
			"Great for reaction cuts and testimonials.",
			"Fits product demos and before/after edits.",
			"Authentic, unpolished look that feels native on social.",
			"Easy to cut into a talking-head edit.",
		},
		models: []demoModel{
			{"mdl_ava_thompson", "Ava Thompson", "female", "18-24"},
			{"mdl_maya_rodriguez", "Maya Rodriguez", "female", "25-34"},
			{"mdl_grace_kim", "Grace Kim", "female", "35-44"},
			{"mdl_linda_novak", "Linda Novak", "female", "55+"},
			{"mdl_liam_oconnor", "Liam O'Connor", "male", "18-24"},
			{"mdl_jamal_washington", "Jamal Washington", "male", "25-34"},
			{"mdl_ravi_patel", "Ravi Patel", "male", "45-54"},
			{"mdl_george_whitfield", "George Whitfield", "male", "55+"},
			{"mdl_sky_morgan", "Sky Morgan", "non_binary", "18-24"},
			{"mdl_river_jensen", "River Jensen", "non_binary", "25-34"},
		},
	}
}

func demoPersonWord(gender string) string {
	return cmp.Or(map[string]string{"female": "woman", "male": "man"}[gender], "non-binary")
}

func demoFraming(orientation, mediaType string) string {
	if mediaType == "image" {
		switch orientation {
		case "vertical":
			return "Vertical 9:16 still photo, candid and unposed."
		case "square":
			return "Square 1:1 still photo for feeds and ads."
		}
		return "Horizontal 16:9 still photo, candid and unposed."
	}
	switch orientation {
	case "vertical":
		return "Vertical 9:16 handheld phone footage, ready for Reels, TikTok and Shorts."
	case "square":
		return "Square 1:1 framing for feeds and ads."
	}
	return "Horizontal 16:9 footage with steady handheld framing."
}
