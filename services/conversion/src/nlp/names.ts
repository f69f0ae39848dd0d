/**
 * Word lists the local engine needs because wink's lite English model tags proper nouns but
 * does not tell people from companies, products or places: a gazetteer of common given names
 * (international, so "Kofi", "Yuki" and "Aisha" are people too), the team names that may own
 * an action item but never attend as a person, and capitalised words that are never names.
 */

const GIVEN = `
aaron abby abdul abigail abraham ada adam adrian ahmed aidan aiden aisha akira alan albert alberto alex alexander
alexandra alexis alfie ali alice alicia alina alison amanda amara amber amelia amir amit amy ana anand anders andre
andrea andreas andrew andy angela angelo anika anita anna anne annie anthony anton antonio anya arjun arnav arthur
asha ashley astrid aurora austin ava axel ayesha barbara beatriz ben benjamin bernard beth bianca bill blake bob
bogdan boris brad brandon brenda brian bridget brooke bruno caleb camila carl carla carlos carmen carol caroline
carrie casey catherine cecilia charles charlie charlotte chen chidi chiara chloe chris christian christina
christine christopher claire clara claudia colin connor craig cristina dan dana daniel daniela danny dario david
dean deborah declan deepak denise dennis derek diana diane diego dmitri dominic donald donna dylan ed eddie edward
eileen elena eli elias elif elijah elisa elizabeth ella ellen ellie elliot emily emma emre eric erica erik erin
esther ethan eva evan eve fatima felix fernando finn fiona florian frances francesca francis frank freddie
freya gabriel gabriela gary gavin george georgia gerald gina giovanni giulia grace graham greg gregory hana hannah
hans harper harris harry hassan hector heidi helen helena henry hiroshi holly hugo ian ibrahim ida igor ines
ingrid irene isaac isabel isabella isla ivan jack jackson jacob jade jake james jamie jan jana jane janet jared
jasmine jason javier jay jean jeff jen jennifer jenny jeremy jessica jill jim jin jo joan joanna joe joel johan
john jon jonas jonathan jordan jorge jose joseph josh joshua joy juan julia julian julie jun justin kai kamal
karen karim karin kate katherine kathy katie kavya kay keith kelly ken kenji kevin khalid kim kiran kofi kristen
kumar kyle lars laura lauren lea leah lee leila lena leo leon leonardo liam lily lina linda lisa liz logan lorenzo
louis louise lucas lucia lucy luis luka luke lukas maja malik mandy manuel marco marcus margaret maria mariam marie
marina mario mark marta martin mary mateo matt matteo matthew max maya mei melissa mia michael michelle miguel
mike mila miles ming mira miriam mo mohamed mohammed mona monica morgan nadia naomi natalia natalie nathan neha
neil nia nick nicole nikhil nikolai nina noah noor nora oliver olivia omar oscar owen pablo paolo patricia patrick
paul paula pedro peter petra phil philip pierre priya rachel rafael rahul raj ravi rebecca richard rick rita rob
robert robin roger rohan ronan rosa rose ross ruby rui ruth ryan sabrina sakura sam samantha samir samuel sana
sandra sara sarah sean sebastian selin sergei seth shan sharon simon simone sofia sophia sophie stefan stella
stephanie stephen steve steven sunil susan suzanne sven tanya tara ted teresa theo thomas tim timothy tina tobias
tom tomas tony tracy tyler una valentina vanessa vera victor victoria vikram vincent wei wendy will william xavier
yara yasmin yuki yusuf yuto zach zainab zara zoe
`;

/** Lower-case given names; a capitalised word in this set is taken for a person. */
export const GIVEN_NAMES: ReadonlySet<string> = new Set(GIVEN.split(/\s+/).filter(Boolean));

/** Departments and teams: valid owners of an action item, never listed as people. */
export const TEAM_WORDS: ReadonlySet<string> = new Set([
  'design', 'support', 'marketing', 'legal', 'sales', 'qa', 'engineering', 'finance', 'ops', 'operations',
  'product', 'security', 'hr', 'data', 'platform', 'leadership', 'procurement', 'research', 'growth',
  'infra', 'infrastructure', 'devops', 'recruiting', 'compliance', 'management', 'analytics', 'backend',
  'frontend', 'mobile', 'web', 'partnerships', 'success', 'everyone', 'team',
]);

/**
 * Capitalised words that start sentences or name calendar things: never an owner or a person
 * even when the tagger calls them proper nouns.
 */
export const NOT_NAMES: ReadonlySet<string> = new Set([
  'i', 'we', 'you', 'he', 'she', 'they', 'it', 'this', 'that', 'there', 'these', 'those', 'the', 'a', 'an', 'and',
  'but', 'so', 'or', 'if', 'then', 'also', 'okay', 'ok', 'yes', 'yeah', 'no', 'nobody', 'somebody', 'someone',
  'anyone', 'everybody', 'who', 'what', 'which', 'when', 'where', 'why', 'how', 'let', 'lets', 'next', 'action',
  'item', 'items', 'note', 'notes', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday',
  'january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november',
  'december', 'today', 'tomorrow', 'tonight', 'yesterday', 'speaker', 'thanks', 'thank', 'hi', 'hello', 'hey',
  'great', 'good', 'sure', 'right', 'well', 'oh', 'one', 'two', 'three', 'all', 'both', 'each', 'my', 'our',
  'your', 'their', 'his', 'her', 'its', 'top', 'goal', 'biggest', 'long', 'plan', 'overall', 'honestly',
]);

/**
 * Teams that own an action item by their bare name ("Design will …", "Legal needs to …").
 * Words that are as often plain nouns ("data", "product", "mobile") own one only as "the
 * data team" / "Data team".
 */
export const OWNER_TEAMS: ReadonlySet<string> = new Set([
  'design', 'support', 'marketing', 'legal', 'sales', 'qa', 'engineering', 'finance', 'procurement', 'leadership',
  'hr', 'ops', 'devops', 'recruiting', 'compliance', 'partnerships', 'security', 'it',
]);
