/**
 * Phrase banks for the demo-library generator (`seed-content.ts`): plain data, no logic.
 *
 * Templates use `{slot}` placeholders. A slot names either a per-recording value (`p1`, `project`,
 * `company`, …, fixed for the whole recording so its sentences agree with each other and with its
 * artifacts), a bank below (`component`, `blocker`, …, a fresh pick at every use), or an integer
 * range (`{n:3-12}`, or `{nth:3-28}` for "21st"). A capitalised slot (`{Project}`) capitalises its value.
 * Sentences are spoken English: contractions, the odd "okay" and "so".
 */

/** The kinds of voice note a product person records; each maps to one `KindSpec`. */
export type RecordingKind =
  | 'standup' | 'one_on_one' | 'customer_call' | 'idea' | 'errands' | 'book' | 'interview' | 'planning';

/** Folder names in the order a user would plausibly have created them. */
export const FOLDER_NAMES = ['Work', 'Customer calls', 'Ideas', 'Personal', 'Reading notes', 'Interviews'] as const;
export type FolderName = (typeof FOLDER_NAMES)[number];

/** How one kind of recording is written. */
export interface KindSpec {
  kind: RecordingKind;
  /** Folder it is filed in; `fallbackFolder` when the plan has no such folder. */
  folder: FolderName;
  fallbackFolder: FolderName;
  /** Relative frequency among a user's recordings. */
  weight: number;
  /** Work notes fall on weekdays in working hours; personal ones any day, morning to night. */
  work: boolean;
  /** Inclusive range of sentences in a transcript. */
  sentences: readonly [number, number];
  titles: readonly string[];
  openings: readonly string[];
  /** Fact sentences: the ones summaries and thread answers quote. */
  body: readonly string[];
  /** Conversational sentences that carry no fact worth summarising. */
  asides: readonly string[];
  /** Action-item tasks as verb phrases ("send the revised deck"). */
  tasks: readonly string[];
  /** How many action items the note states, inclusive. */
  actions: readonly [number, number];
  /** Probability that an action item is the speaker's own ("I'll …"). */
  mine: number;
  closings: readonly string[];
  /** Thread prompts for a thread anchored on this kind. */
  threadTitles: readonly string[];
  notes: readonly string[];
  questions: readonly string[];
  /** A recap email's addressee and opening line; null when nobody would be emailed about this kind. */
  email: { to: string; intro: string } | null;
}

export const PEOPLE = [
  'Priya', 'Marcus', 'Elena', 'Tom', 'Aisha', 'Jonas', 'Mei', 'Diego', 'Sarah', 'Kofi',
  'Hannah', 'Raj', 'Lena', 'Omar', 'Grace', 'Felix', 'Nina', 'Yuki', 'Ben', 'Chloe',
] as const;

export const SURNAMES = [
  'Okafor', 'Lindqvist', 'Moreau', 'Tanaka', 'Alvarez', 'Brennan', 'Kowalski', 'Haddad', 'Nguyen', 'Fischer',
  'Patel', 'Osei', 'Romano', 'Park', 'Schultz', 'Mensah',
] as const;

export const COMPANIES = [
  'Northwind', 'Acme Logistics', 'Brightline Health', 'Fernhill Bank', 'Kestrel Foods', 'Lumen Retail',
  'Orbital Freight', 'Pinecrest Insurance', 'Tandem Travel', 'Veridian Energy', 'Bluebird Schools', 'Harbor & Co',
] as const;

export const CONTACT_ROLES = [
  'head of operations', 'VP of product', 'IT director', 'customer success manager', 'CFO', 'team lead',
] as const;

export const PROJECTS = [
  'checkout redesign', 'onboarding flow', 'search relevance', 'mobile offline mode', 'billing migration',
  'notifications revamp', 'pricing page', 'analytics dashboard', 'sharing permissions', 'transcript editor',
] as const;

export const HIRING_ROLES = [
  'senior product designer', 'backend engineer', 'product manager', 'data analyst', 'engineering manager',
  'iOS engineer',
] as const;

export const WORKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'] as const;

export const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;
export const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'] as const;

export const QUARTERS = ['Q1', 'Q2', 'Q3', 'Q4'] as const;

/** Due dates: the phrase spoken after "by", and the label an action list shows. */
export const DUES: readonly (readonly [string, string])[] = [
  ['Monday', 'Monday'], ['Tuesday', 'Tuesday'], ['Wednesday', 'Wednesday'], ['Thursday', 'Thursday'],
  ['Friday', 'Friday'], ['next Friday', 'Next Friday'], ['next Tuesday', 'Next Tuesday'],
  ['end of day', 'End of day'], ['the end of the week', 'End of week'], ['the end of the month', 'End of month'],
  ['the 14th', '14th'], ['the 21st', '21st'], ['Saturday', 'Saturday'],
];

/** Banks a template may name directly; each use draws afresh. */
export const BANKS: Readonly<Record<string, readonly string[]>> = {
  weekday: WORKDAYS,
  month: MONTHS,
  component: [
    'payment form', 'address autocomplete', 'API pagination', 'empty states', 'error banners', 'settings page',
    'CSV export', 'retry logic', 'feature flag', 'A/B test setup', 'search index', 'push notification service',
  ],
  blocker: [
    'the legal review of the new terms', 'a flaky integration test', 'the design sign-off', 'access to the staging data',
    'the payments provider sandbox', 'an answer from the security team', 'the translations for German and French',
  ],
  pain: [
    'exporting notes into their CRM is manual', 'they lose track of decisions made on calls',
    'onboarding new staff takes about three weeks', 'their managers never read the long meeting notes',
    'search doesn\'t find things by who said them', 'the mobile app drops recordings on bad connections',
  ],
  request: [
    'single sign-on with Okta', 'a Salesforce integration', 'EU data residency', 'speaker labels in transcripts',
    'shared folders for the whole team', 'an admin audit log', 'custom summary templates',
  ],
  objection: [
    'the price per seat is higher than their current tool', 'procurement wants a security questionnaire first',
    'they\'re worried about recording consent in some states', 'their IT team wants on-prem storage',
  ],
  strength: [
    'really clear communication', 'strong systems thinking', 'a great portfolio walkthrough',
    'very good questions about our customers', 'solid SQL and experiment design', 'calm under pressure in the live exercise',
  ],
  concern: [
    'not much experience with B2B products', 'the take-home felt rushed', 'vague answers about conflict with stakeholders',
    'they talked a lot about output and not much about outcomes', 'limited experience mentoring others',
  ],
  grocery: [
    'oat milk', 'eggs', 'spinach', 'sourdough', 'lemons', 'coffee beans', 'chickpeas', 'basmati rice', 'tomatoes',
    'avocados', 'Greek yogurt', 'parmesan', 'olive oil', 'bananas', 'fresh basil', 'dish soap', 'AA batteries',
  ],
  growth: [
    'leading a project end to end', 'getting better at presenting to execs', 'moving toward a staff role',
    'learning more about data and experimentation', 'mentoring the new hires',
  ],
  metric: ['activation', 'week-one retention', 'conversion on the pricing page', 'time to first summary', 'NPS'],
};

const WORK_NOTES = [
  'Pulling together everything on the {project} before the review.',
  'I keep hearing the same thing in different meetings, want to see it in one place.',
  'Need a clear story for leadership on the {project} by next week.',
];

/** One spec per kind. */
export const KIND_SPECS: readonly KindSpec[] = [
  {
    kind: 'standup', folder: 'Work', fallbackFolder: 'Work', weight: 22, work: true, sentences: [6, 16],
    titles: ['Stand-up: {project}', 'Daily stand-up, {project}', '{Project} stand-up', 'Stand-up notes: {project}'],
    openings: ['Okay, quick notes from the {project} stand-up.', 'Stand-up for the {project}, {today}.', 'So, stand-up just finished, writing this down before I forget.'],
    body: [
      '{p1} finished the {component} and it\'s in review now.',
      '{p2} is blocked on {blocker}.',
      '{p1} is pairing with {p3} on the {component} today.',
      'QA found {n:3-14} bugs in the {component}, the worst one is a release blocker.',
      'We\'re still on track for the beta on the {nth:3-28}.',
      'The {component} change shipped behind a flag to {n:5-25} percent of users.',
      '{p2} thinks the estimate for the {component} was about {n:2-4} days too optimistic.',
      'Design handed over the final mocks for the {component} yesterday.',
      'Error rate on the new flow dropped to {n:1-4} percent after the fix.',
      '{p3} will be out on {weekday} so {p1} covers code review.',
    ],
    asides: ['{p3} joined late, train delays again.', 'Quick reminder that the retro moved to {weekday}.', 'Someone asked about the offsite dates, nobody knows yet.'],
    tasks: ['send the updated designs to the team', 'write up the rollout plan', 'fix the failing checkout test', 'ping legal about the new terms', 'update the Jira board', 'demo the {component} to support'],
    actions: [1, 3], mine: 0.3,
    closings: ['That\'s it for today.', 'Nothing else, back to it.', 'Okay, that\'s stand-up.'],
    threadTitles: ['{Project}: open questions', 'Where is the {project} at?', '{Project} progress'],
    notes: WORK_NOTES,
    questions: ['What is still blocking the {project}?', 'Are we on track for the {project} beta?'],
    email: { to: 'team', intro: 'Here\'s a quick recap of today\'s stand-up:' },
  },
  {
    kind: 'one_on_one', folder: 'Work', fallbackFolder: 'Work', weight: 10, work: true, sentences: [6, 16],
    titles: ['1:1 with {p1}', '{p1} 1:1', '1:1 {p1}: growth and workload'],
    openings: ['Notes from my 1:1 with {p1}.', 'Just had the weekly 1:1 with {p1}.', 'Okay, 1:1 with {p1}, a few things to remember.'],
    body: [
      '{p1} is interested in {growth}.',
      'Workload feels heavy, {p1} has been on {n:3-6} projects at once this month.',
      '{p1} gave me feedback that my specs are too long and nobody reads past the first page.',
      '{p1} wants to lead the {project} next quarter.',
      'We agreed {p1} drops the {component} work so there\'s room for the {project}.',
      '{p1} is taking {n:3-10} days off in the second half of next month.',
      '{p1} feels the team meetings run over, about {n:10-25} minutes every time.',
      'Praise from {p2} about how {p1} handled the incident last week, I should pass that on.',
    ],
    asides: ['We spent the first few minutes talking about {p1}\'s weekend.', '{p1} seemed more relaxed than last time.'],
    tasks: ['share the promotion criteria with {p1}', 'set up a session with {p2} on presenting', 'move the team sync to 30 minutes', 'write feedback for {p1}\'s review'],
    actions: [1, 2], mine: 0.7,
    closings: ['Good conversation overall.', 'Next 1:1 in two weeks.'],
    threadTitles: ['Team growth and feedback', 'Notes for performance reviews'],
    notes: ['Performance reviews are coming up, collecting what I\'ve heard.', 'Want to make sure growth goals don\'t get lost between 1:1s.'],
    questions: ['What growth goals came up in my 1:1s?', 'What feedback have I been given lately?'],
    email: null,
  },
  {
    kind: 'customer_call', folder: 'Customer calls', fallbackFolder: 'Work', weight: 18, work: true, sentences: [10, 25],
    titles: ['Call with {company}', '{company} renewal call', 'Discovery call: {company}', '{company} check-in'],
    openings: ['Notes from the call with {contact}, {contactRole} at {company}.', 'Just got off the phone with {contact} from {company}, {p1} joined from our side.', 'Okay, {company} call, recording my notes.'],
    body: [
      'They have about {n:40-900} seats and renewal is in {month}.',
      'Their main pain is that {pain}.',
      'They asked twice for {request}.',
      '{contact} said {objection}.',
      'They\'re seeing about {n:10-45} percent of new users drop off before the first recording.',
      'Budget for next year is roughly {n:20-180} thousand dollars.',
      '{contact} loved the automatic summaries, they already send them to {n:3-20} managers.',
      'Competitor mentioned was Otter, mostly on price.',
      'If we ship {request} they would expand to another {n:2-6} teams.',
      'Their legal team needs a signed DPA before anything else.',
      'About {n:15-60} people use the app every day right now.',
      'They want the pilot extended by {n:2-6} weeks.',
    ],
    asides: ['Took a few minutes to get the screen share working.', '{contact} just came back from parental leave.', 'They\'re moving offices next month so things are a bit chaotic.', '{p1} did most of the demo and it went smoothly.', 'They use Slack and Google Workspace for everything.', 'The trial left a good first impression.'],
    tasks: ['send {company} the security questionnaire', 'share the pricing proposal with {contact}', 'set up a demo of the admin console', 'log the feature request in Productboard', 'send the revised deck'],
    actions: [1, 3], mine: 0.5,
    closings: ['Overall a positive call.', 'They seemed keen, let\'s keep momentum.', 'Next call in about two weeks.'],
    threadTitles: ['What customers are asking for', '{company} account notes', 'Pricing feedback from calls'],
    notes: ['Seeing a pattern across customer calls, want it in one place.', 'Prep for the pricing review next week.'],
    questions: ['What are customers asking for most?', 'What did {company} say about pricing?'],
    email: { to: 'team', intro: 'Here\'s a recap of our call with {contact} at {company}:' },
  },
  {
    kind: 'idea', folder: 'Ideas', fallbackFolder: 'Personal', weight: 12, work: false, sentences: [4, 12],
    titles: ['Idea: {idea}', 'Product idea: {idea}', 'Shower thought: {idea}'],
    openings: ['Idea while walking: {idea}.', 'Okay, quick product idea: {idea}.', 'Random thought about {idea}.'],
    body: [
      'The problem is that {pain}.',
      'This could move {metric} by maybe {n:2-10} points.',
      'A first version could be built in about {n:2-6} weeks.',
      'We could test it with a fake door on the {project} first.',
      '{p1} mentioned something similar last month.',
      'Risk is that it adds another setting nobody finds.',
      'Would be worth asking {n:5-8} customers before building anything.',
    ],
    asides: ['Not sure about the name yet.', 'Might be nothing, but writing it down anyway.'],
    tasks: ['sketch the flow', 'ask {p1} if this is feasible', 'add it to the ideas board', 'check the data on {metric}'],
    actions: [0, 2], mine: 0.8,
    closings: ['Anyway, parking this for now.', 'Worth bringing up at planning.'],
    threadTitles: ['Idea backlog', 'Ideas worth testing'],
    notes: ['Collecting ideas before planning.', 'A few ideas keep coming back, want to compare them.'],
    questions: ['Which of these ideas is cheapest to test?', 'Which idea would move {metric} the most?'],
    email: null,
  },
  {
    kind: 'errands', folder: 'Personal', fallbackFolder: 'Personal', weight: 10, work: false, sentences: [3, 8],
    titles: ['Groceries and errands', 'Saturday errands', 'To-do before the trip', 'Shopping list', 'Weekend to-dos'],
    openings: ['Note to self.', 'Okay, things to do this weekend.', 'Quick list before I forget.'],
    body: [
      'For groceries: {grocery}, {grocery} and {grocery}.',
      'We\'re out of {grocery}, get two.',
      'The dentist can do {weekday} at {n:8-11} in the morning.',
      'Car insurance renews on the {nth:2-28}, the quote was {n:380-720} dollars.',
    ],
    asides: ['Also, it\'s supposed to rain on {weekday}.'],
    tasks: ['pick up the dry cleaning', 'return the library books', 'drop off the parcel at the post office', 'book the dentist', 'call the plumber about the kitchen tap', 'buy a birthday card for {p1}', 'do the grocery run'],
    actions: [1, 4], mine: 1,
    closings: ['That\'s everything.', 'And water the plants.'],
    threadTitles: ['Weekend to-dos', 'Home admin'],
    notes: ['Too many small errands floating around.', 'Trying to batch errands into one trip.'],
    questions: ['What do I still need to do this weekend?'],
    email: null,
  },
  {
    kind: 'book', folder: 'Reading notes', fallbackFolder: 'Personal', weight: 8, work: false, sentences: [5, 14],
    titles: ['Notes on {book}', 'Reading notes: {book}', '{book}, chapter {n:2-12}'],
    openings: ['Notes on {book} by {author}.', 'Reading {book} again, a few things that stuck.', 'Finished another chapter of {book}.'],
    body: [
      'The key idea is that {bookIdea}.',
      '{author} argues that {bookIdea}.',
      'One thing I want to try at work: {bookIdea}.',
      'I disagree a bit with the part saying {bookIdea}.',
      'This connects to what {p1} said about the {project}.',
      'Good quote on page {n:20-260}, need to find it again.',
    ],
    asides: ['Reading this on the train mostly.', 'The middle chapters drag a bit.'],
    tasks: ['share the chapter with {p1}', 'try this in the next planning session', 'write a short summary for the team wiki'],
    actions: [0, 1], mine: 1,
    closings: ['Recommended.', 'More next chapter.'],
    threadTitles: ['Reading: ideas worth trying at work', 'Book notes'],
    notes: ['A few ideas from my reading keep coming up.', 'Want to turn reading notes into something the team can use.'],
    questions: ['Which ideas from my reading could we try with the team?'],
    email: null,
  },
  {
    kind: 'interview', folder: 'Interviews', fallbackFolder: 'Work', weight: 8, work: true, sentences: [8, 20],
    titles: ['Debrief: {candidate}, {role}', 'Interview debrief, {role}', '{candidate} interview notes'],
    openings: ['Debrief for {candidate}, interviewing for {role}.', 'Just finished the {role} interview with {candidate}.', 'Okay, notes on {candidate} while it\'s fresh.'],
    body: [
      '{candidate} showed {strength}.',
      'My concern is {concern}.',
      'I\'d score it {n:2-4} out of 4 on product sense.',
      '{p1} interviewed them on system design and leans hire.',
      '{candidate} has about {n:3-12} years of experience, last at {company}.',
      'Salary expectation is around {n:95-190} thousand.',
      'They can start in {n:2-8} weeks.',
      'Overall I\'m a lean hire, but {p2} should weigh in.',
    ],
    asides: ['We started {n:5-10} minutes late because of the video link.', 'They asked good questions about how we run discovery.', 'The live exercise ran a bit long.'],
    tasks: ['set up the reference calls', 'send feedback to the recruiter', 'schedule the final round with {p2}', 'write up the scorecard'],
    actions: [1, 2], mine: 0.5,
    closings: ['Decision by the end of the week.', 'Let\'s compare with the other finalists.'],
    threadTitles: ['Hiring: {role}', 'Candidates for the {role} role'],
    notes: ['Comparing the finalists before the hiring committee.', 'Need a decision on the {role} role soon.'],
    questions: ['How do the candidates compare?', 'Who is the strongest {role} candidate?'],
    email: { to: '{p2}', intro: 'My notes from the interview with {candidate} for the {role} role:' },
  },
  {
    kind: 'planning', folder: 'Work', fallbackFolder: 'Work', weight: 12, work: true, sentences: [10, 25],
    titles: ['Planning: {quarter} roadmap', 'Sprint planning: {project}', 'Planning session: {project} launch'],
    openings: ['Planning session for {quarter}, with {p1} and {p2}.', 'Sprint planning for the {project}.', 'Okay, notes from {quarter} planning.'],
    body: [
      'Top priority for {quarter} is the {project}.',
      'We have {n:4-9} engineers for {n:5-12} weeks.',
      'Goal is to move {metric} by {n:3-15} percent.',
      'The {component} work gets cut to make room.',
      'Biggest risk is {blocker}.',
      '{p1} estimates the {project} at {n:3-8} sprints.',
      'We agreed to launch to {n:5-20} percent of users first.',
      '{p2} wants a kill criterion: if {metric} doesn\'t move in {n:2-6} weeks, we stop.',
      'Support needs {n:2-4} weeks of notice before launch.',
      'Marketing is planning the announcement for the {nth:3-28}.',
      'Design needs {n:2-4} more weeks of research before we commit.',
      'The {component} rework moves to next quarter.',
    ],
    asides: ['We ran about {n:10-30} minutes over.', '{p3} dialed in from the train.', 'Long debate about naming, we parked it.', 'Whiteboard photo is in the shared drive.'],
    tasks: ['write the one-pager for the {project}', 'send the revised deck to leadership', 'break the epics into tickets', 'confirm headcount with finance', 'book the launch review'],
    actions: [2, 4], mine: 0.4,
    closings: ['Plan goes to leadership on Monday.', 'Good session, clear priorities.'],
    threadTitles: ['{quarter} planning', '{Project} launch plan'],
    notes: WORK_NOTES,
    questions: ['What did we commit to for the {project}?', 'What are the biggest risks this quarter?'],
    email: { to: 'team', intro: 'Here\'s a recap of today\'s planning session:' },
  },
];

/** How an action item is spoken: by someone else (`{owner}`), or by the speaker. */
export const ACTION_TEMPLATES = {
  theirs: ['{owner} will {task} by {due}.', 'Action item: {owner} to {task} by {due}.', '{owner} is going to {task} by {due}.', '{owner} agreed to {task} by {due}.'],
  mine: ['I\'ll {task} by {due}.', 'Action item for me: {task} by {due}.', 'I need to {task} by {due}.'],
} as const;

/** Closing notes on a thread, after its question and answer. */
export const FOLLOW_UPS = [
  'Bring this to {weekday}\'s review.', 'Follow up with {p1} on this.', 'Turn this into a one-pager.', 'Revisit in two weeks.',
];

/** Product ideas for the `idea` kind, as noun phrases. */
export const IDEAS = [
  'auto-tagging recordings by topic', 'a weekly digest of open action items', 'shareable transcript snippets',
  'smart folders by who is speaking', 'an offline recording queue', 'calendar-aware recording titles',
  'one-tap follow-up emails after calls', 'a voice command to start a thread',
] as const;

/** Books with ideas a reader would note: clauses that fit after "that", as many as book templates use. */
export const BOOKS: readonly { title: string; author: string; ideas: readonly string[] }[] = [
  { title: 'The Mom Test', author: 'Rob Fitzpatrick', ideas: ['you should talk about their life instead of your idea', 'compliments are noise and commitments are signal', 'you learn more from specifics in the past than opinions about the future', 'a meeting without a next step was a waste'] },
  { title: 'Continuous Discovery Habits', author: 'Teresa Torres', ideas: ['the team should talk to a customer every week', 'an opportunity solution tree keeps outcomes visible', 'you test assumptions, not whole ideas', 'interview snapshots make each conversation easy to share'] },
  { title: 'Shape Up', author: 'Ryan Singer', ideas: ['appetite comes before estimates', 'six-week cycles with a cool-down keep teams sane', 'pitches should be rough but solved', 'there is no backlog, only pitches for the next cycle'] },
  { title: 'Thinking, Fast and Slow', author: 'Daniel Kahneman', ideas: ['we overweight what is easy to recall', 'anchors shape estimates even when they are random', 'a premortem surfaces risks people won\'t say out loud', 'people judge a whole experience by its peak and its end'] },
  { title: 'Deep Work', author: 'Cal Newport', ideas: ['focus is a skill you train', 'shallow work expands to fill the day', 'batching meetings protects long blocks of time', 'you should schedule every minute of the workday'] },
  { title: 'Good Strategy Bad Strategy', author: 'Richard Rumelt', ideas: ['a strategy starts with a diagnosis', 'a list of goals is not a strategy', 'good strategy focuses effort on a few coordinated actions', 'ambition without a plan is just a wish'] },
  { title: 'An Elegant Puzzle', author: 'Will Larson', ideas: ['teams should be six to eight people', 'migrations are the only scalable fix for tech debt', 'you should size teams before you plan work', 'a good manager writes things down before deciding'] },
];


/** Knowledge-base themes: the kinds of recording each gathers. */
export const KB_THEMES: readonly { name: string; description: string; kinds: readonly RecordingKind[] }[] = [
  { name: 'Customer insights', description: 'What customers told us on calls: pain points, feature requests and objections.', kinds: ['customer_call'] },
  { name: 'Product delivery', description: 'Stand-ups and planning sessions: commitments, risks and what shipped.', kinds: ['standup', 'planning'] },
  { name: 'Hiring loop', description: 'Interview debriefs and scorecards for open roles.', kinds: ['interview'] },
  { name: 'Ideas and reading', description: 'Product ideas and book notes worth revisiting at planning time.', kinds: ['idea', 'book'] },
  { name: 'Team and people', description: '1:1 notes: growth goals, feedback and workload.', kinds: ['one_on_one'] },
];
