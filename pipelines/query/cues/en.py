"""English words with which a question asks about a collection as a whole (folded, as regular-expression alternatives
or words): what the router's rules 1 and 3 read (pipelines.query.router)."""

WHOLE = "collection collections corpus"  # the collection as a whole
ITEM = "document text article page episode transcript chapter section"  # one of its items
ITEMS = r"documents|texts|articles|pages|episodes|transcripts|chapters|sections"  # its items in the plural
REPORTING = (r"discuss\w*|mention\w*|talk|talks|talking|describe|described|highlight\w*|emphasi\w*|cited|cite"
             r"|say|says|said|according|believe|believes")  # how a question says what its text says
HOLDING = (r"appear\w*|comes? up|came up|coming up|shows? up|showed up|feature[sd]?|featuring|covers?|covered"
           r"|contains?|contained")  # how a question says that its items hold something
CUES = (r"recurr\w*|recur|recurs|common|commonly|often|frequent|frequently|frequency|typical\w*|usual\w*|generally"
        r"|overall|in general|across|trends?|themes?|thematic|topics?|patterns?|consistent\w*|repeated\w*|compar\w*"
        r"|differ\w*|vary|varies|variation|various|diverse|multiple|similarit\w*|shared")  # frequency, comparison
REPORTED = (r"any|examples|instances|insights|views|perspectives|opinions|approaches|stories|anecdotes"
            r"|experiences")  # the plural things several sources report
OVERVIEW = (r"what are the (main |key )?(themes|topics|subjects)|themes|topics|overview|summari[sz]e|main ideas"
            r"|across (the |all )?(documents|collection|corpus)|the whole (collection|corpus)|dominant")
WIDER = r"(broader|wider|general|overall) context|big picture|in general|more broadly"  # wider context, asked
