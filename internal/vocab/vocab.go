// Package vocab is the built-in embedder's vocabulary: the concepts of
// B-roll search and the words people use for them. The embedder gives each
// concept a dimension; the lexicon generator (embed/internal/wordnetgen)
// prefers, among the WordNet meanings of a word, those the vocabulary's
// phrases carry, so a change here changes the table too: regenerate it
// (`make embed-lexicon`) with any change.
package vocab

// Concept is one meaning in the B-roll vocabulary and the words and phrases
// people use for it. A phrase listed under two concepts counts for both
// ("stunned" is shocked and amazed). Phrases are written as plain lowercase
// words; they are tokenised like any text, so "jaw-dropping" and
// "jaw dropping" are the same phrase.
//
// Any change here changes the vectors the built-in embedder makes: bump
// builtinModel (embed/builtin.go) with it so that stored vectors are re-embedded rather than
// compared with vectors of a different vocabulary.
type Concept struct {
	Name    string
	Phrases []string
}

// Concepts is read-only data: NewBuiltin compiles it into lookup tables
// owned by each Builtin. The concepts cover the catalog's emotion, gender and
// age values and the places, people, actions and objects that UGC-style
// B-roll is searched by.
var Concepts = []Concept{
	// Emotions (the catalog's emotion values first).
	{"happy", []string{"happy", "happiness", "joyful", "joy", "cheerful", "smiling", "smile", "smiles", "glad",
		"delighted", "grinning", "grin", "beaming", "content", "pleased", "positive", "good mood", "all smiles", "genuine smile"}},
	{"laughing", []string{"laughing", "laugh", "laughs", "laughed", "laughter", "cracking up", "cracks up",
		"giggling", "giggle", "giggles", "chuckling", "chuckle", "lol", "lmao", "rofl", "in stitches",
		"hysterical", "burst out laughing", "funny", "laughing out loud"}},
	{"shocked", []string{"shocked", "shock", "stunned", "astonished", "jaw drop", "jaw dropping", "jaw dropped",
		"speechless", "gasp", "gasping", "omg", "disbelief", "horrified", "aghast", "cant believe", "cant believe it"}},
	{"amazed", []string{"amazed", "amazing", "amazement", "stunned", "astonished", "jaw drop", "jaw dropping",
		"jaw dropped",
		"wow", "awe", "in awe", "awestruck", "impressed", "mind blown", "blown away", "wide eyed"}},
	{"surprised", []string{"surprised", "surprise", "surprising", "unexpected", "startled", "caught off guard", "raising eyebrows", "raised eyebrows"}},
	{"sad", []string{"sad", "sadness", "upset", "crying", "cry", "cries", "tearful", "tears", "teary",
		"unhappy", "depressed", "heartbroken", "sobbing", "gloomy", "miserable", "disappointed", "downcast",
		"disappointment", "sighing", "emotional"}},
	{"angry", []string{"angry", "anger", "furious", "mad", "annoyed", "irritated", "rage", "raging",
		"frustrated", "pissed", "livid", "fuming", "outraged", "frustration", "frowning", "frown", "arguing",
		"stress", "stressed"}},
	{"excited", []string{"excited", "excitement", "exciting", "thrilled", "hyped", "hype", "pumped", "stoked",
		"ecstatic", "enthusiastic", "fired up", "cant wait", "celebrating", "cheering", "celebration", "high energy",
		"jumping with excitement"}},
	{"confused", []string{"confused", "confusion", "puzzled", "lost", "baffled", "perplexed", "unsure",
		"bewildered", "head scratching", "scratching head", "scratching his head", "scratching her head", "shrugging", "shrug"}},
	{"playful", []string{"playful", "silly", "goofy", "goofing around", "funny face", "cheeky", "teasing",
		"joking", "mischievous", "funny faces", "winking", "wink", "fun"}},
	{"confident", []string{"confident", "confidence", "bold", "proud", "assertive", "self assured",
		"power pose", "determined", "empowered", "confidently", "eye contact"}},
	{"curious", []string{"curious", "curiosity", "intrigued", "wondering", "inquisitive", "interested", "curiously", "intriguing", "peeking", "discovery"}},
	{"neutral", []string{"neutral", "calm", "serious", "expressionless", "straight face", "blank stare",
		"relaxed", "chill", "calmly", "quietly", "no big reaction"}},

	// People.
	{"woman", []string{"woman", "women", "lady", "ladies", "girl", "girls", "female", "gal", "mom", "mother",
		"she"}},
	{"man", []string{"man", "men", "guy", "guys", "dude", "dudes", "male", "boy", "boys", "gentleman", "bloke",
		"dad", "father", "he"}},
	{"non_binary", []string{"non binary", "nonbinary", "enby", "genderqueer", "androgynous"}},
	{"young", []string{"young", "youth", "teen", "teenager", "teenage", "student", "twenties", "gen z",
		"young adult"}},
	{"middle_aged", []string{"middle aged", "thirties", "forties", "adult"}},
	{"older", []string{"older", "old", "elderly", "senior", "retired", "grandma", "grandpa", "grandmother",
		"grandfather", "fifties", "sixties"}},
	{"couple", []string{"couple", "friends", "together", "group", "two people", "family"}},

	// Places.
	{"car", []string{"car", "cars", "driving", "drive", "driver", "behind the wheel", "steering wheel",
		"vehicle", "auto", "truck", "suv", "road trip", "passenger seat", "front seat", "dashboard",
		"commute", "commuting"}},
	{"kitchen", []string{"kitchen", "cooking", "cook", "cooks", "chef", "baking", "bake", "stove", "recipe",
		"countertop", "meal prep"}},
	{"office", []string{"office", "desk", "work", "working", "workplace", "coworker", "coworkers", "meeting",
		"cubicle", "business", "job", "boss", "team", "work from home", "zoom call", "video call"}},
	{"gym", []string{"gym", "workout", "working out", "work out", "exercise", "exercising", "fitness",
		"training", "lifting", "weights", "treadmill", "yoga", "sweaty", "athletic"}},
	{"beach", []string{"beach", "sea", "ocean", "shore", "sand", "sandy", "seaside", "coast", "ocean waves",
		"surf", "surfing", "swimsuit", "bikini", "tropical", "watching the waves"}},
	{"street", []string{"street", "streets", "city", "downtown", "urban", "sidewalk", "crosswalk", "traffic",
		"skyline", "town"}},
	{"home", []string{"home", "house", "living room", "couch", "sofa", "bedroom", "bed", "apartment",
		"indoors", "at home", "lounge"}},
	{"couch", []string{"couch", "sofa", "settee", "sitting on the couch", "lying on the couch"}},
	{"outdoors", []string{"outdoors", "outside", "outdoor", "park", "nature", "garden", "backyard", "forest",
		"hiking", "trail", "mountain"}},
	{"bathroom", []string{"bathroom", "mirror", "shower", "bathtub", "vanity"}},
	{"store", []string{"store", "shop", "shopping", "mall", "supermarket", "grocery", "groceries", "checkout",
		"retail"}},
	{"restaurant", []string{"restaurant", "cafe", "coffee shop", "diner", "bar", "pub", "menu"}},

	// Objects and actions common in UGC clips.
	{"phone", []string{"phone", "phones", "smartphone", "cellphone", "cell phone", "mobile phone", "iphone",
		"android", "mobile", "scrolling", "scroll", "texting", "text message", "swiping", "social media",
		"tiktok", "instagram", "notification", "on the phone", "phone call"}},
	{"laptop", []string{"laptop", "computer", "pc", "macbook", "notebook computer", "typing", "keyboard",
		"screen", "monitor", "online"}},
	{"coffee", []string{"coffee", "cup", "mug", "latte", "espresso", "cappuccino", "barista", "tea",
		"coffee shop", "morning coffee"}},
	{"unboxing", []string{"unboxing", "unbox", "unboxes", "package", "parcel", "box", "delivery", "haul",
		"opening a package", "opening a box", "open the box", "product reveal"}},
	{"selfie", []string{"selfie", "selfies", "vlog", "vlogging", "vlogger", "talking to camera",
		"talking to the camera", "talks to camera", "talking head", "facing camera", "facing the camera",
		"front camera", "webcam", "influencer", "content creator", "ugc", "testimonial", "review"}},
	{"dancing", []string{"dancing", "dance", "dances", "dancer", "dance moves", "twerking", "choreography",
		"grooving"}},
	{"eating", []string{"eating", "eat", "eats", "food", "meal", "snack", "snacking", "lunch", "dinner",
		"breakfast", "bite", "chewing", "tasting", "pizza", "burger"}},
	{"drinking", []string{"drinking", "drink", "drinks", "sip", "sipping", "beverage", "smoothie", "wine",
		"beer", "soda", "water bottle"}},
	{"pointing", []string{"pointing", "point", "points", "pointing at", "pointing up", "finger pointing",
		"gesturing"}},
	{"thumbs_up", []string{"thumbs up", "thumb up", "thumbs-up", "approval", "approves", "recommend",
		"recommends"}},
	{"waving", []string{"waving", "wave", "waves hello", "waving hello", "greeting", "hello", "hi", "bye",
		"goodbye"}},
	{"talking", []string{"talking", "talk", "talks", "speaking", "speak", "chatting", "chat",
		"conversation", "explaining", "telling", "saying"}},
	{"walking", []string{"walking", "walk", "walks", "strolling", "stroll", "running", "jogging",
		"commuting on foot"}},
	{"sitting", []string{"sitting", "sits", "seated", "sitting down"}},
	{"makeup", []string{"makeup", "make up", "skincare", "skin care", "lipstick", "beauty", "cosmetics",
		"getting ready", "grwm"}},
	{"music", []string{"music", "headphones", "earbuds", "listening", "singing", "sing", "song", "playlist",
		"radio"}},
	{"pet", []string{"dog", "dogs", "cat", "cats", "pet", "pets", "puppy", "kitten"}},
	{"money", []string{"money", "cash", "wallet", "credit card", "paying", "payment", "bills", "budget",
		"price", "prices", "comparing prices"}},
	{"reaction", []string{"reaction", "reacting", "reacts", "facepalm", "hands on face",
		"covering mouth"}},

	// The activities and objects of the demo catalog (demo/words.go)
	// that the concepts above do not cover. Each lists the catalog's own
	// words; the WordNet lexicon joins other words for the same things to
	// them (embed/lexicon.go).
	{"reading", []string{"reading", "read", "reads", "book", "books", "reading a book"}},
	{"email", []string{"email", "emails", "e mail", "reading an email"}},
	{"presenting", []string{"presenting", "presentation", "presenting to the team"}},
	{"bus", []string{"bus", "buses", "bus stop", "waiting for the bus"}},
	{"map", []string{"map", "maps", "checking a map"}},
	{"sunscreen", []string{"sunscreen", "putting on sunscreen"}},
	{"fruit", []string{"fruit", "fruits", "fresh fruit"}},
	{"cart", []string{"shopping cart", "cart", "carts"}},
	{"label", []string{"label", "labels", "reading a label"}},
	{"picnic", []string{"picnic", "picnics", "having a picnic"}},
	{"journaling", []string{"journaling", "journal", "journals"}},
	{"fridge", []string{"fridge", "opening the fridge"}},
	{"tv", []string{"tv", "watching tv"}},
	{"pasta", []string{"pasta"}},
	{"stretching", []string{"stretching", "stretch", "stretches", "yoga mat"}},
	{"night", []string{"night", "at night"}},
	{"waking_up", []string{"waking up", "wake up", "wakes up", "woke up"}},
	{"traffic", []string{"traffic", "stuck in traffic", "traffic jam"}},
}
