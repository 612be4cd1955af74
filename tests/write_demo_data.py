"""Writes every body of the demo world's search and full text into paperfetch/demo/data (or the folder given).

Nothing here is recorded: the titles, authors, PMIDs (900001xx-900004xx), PMCIDs (PMC90002xx), OpenAlex ids
(W5555…) and DOIs (10.5555/…) are invented, and so is every sentence. The shapes are the services' own, as the
recorded answers in shared/fixtures/real show them (field names, nesting, and the quirks the sources handle: a
structured abstract, a CollectiveName, a DOI only in ELocationID, markup in titles, Crossref references with and
without a DOI and in upper case, an OpenAlex cursor, Europe PMC's citation paging). tests/test_provenance.py
checks that running this again writes the committed files byte for byte.

    python tests/write_demo_data.py [OUT]
"""

import json
import sys
import textwrap
from pathlib import Path

OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "paperfetch" / "demo" / "data"
OUT.mkdir(parents=True, exist_ok=True)

def w(name, text):
    (OUT / name).write_text(text, encoding="utf-8", newline="\n")

def wj(name, doc):
    w(name, json.dumps(doc, ensure_ascii=False, indent=1) + "\n")

JOURNAL = "Journal of demo studies (Exampletown)"
ABBR = "J Demo Stud"
# (pmid, doi, pmcid, title xml, authors, abstract sections, doi only in ELocationID)
PEOPLE = [("Quill", "Ada", "A"), ("Marlow", "Tobias J", "TJ"), ("Okafor", "Ngozi", "N"), ("Lindqvist", "Sven", "S"),
          ("Haddad", "Rania", "R"), ("Moreau", "Camille", "C"), ("Tanaka", "Hiro", "H"), ("Brandt", "Eliza M", "EM"),
          ("Pereira", "Joao", "J"), ("Novak", "Ilse", "I"), ("Ferreira", "Lucas", "L"), ("Adeyemi", "Tola", "T")]
HITS = [
    ("90000101", "10.5555/demo.search.1", "PMC9000101", "Soil microbes that fix nitrogen under snow cover.",
     [0, 1, 2, 3], [("BACKGROUND", "Nitrogen fixation in frozen soil is rarely measured."),
                    ("METHODS", "We sampled forty invented plots under snow and counted nitrogenase activity."),
                    ("RESULTS", "Activity stayed at a third of the summer rate under half a metre of snow."),
                    ("CONCLUSIONS", "Snow-covered soil keeps fixing nitrogen through the winter.")], False),
    ("90000102", "10.5555/demo.search.2", None, "A field guide to counting earthworms by sound.",
     [4, 5, None], [(None, "Earthworms make faint sounds as they move; a buried microphone counts them without digging.")], False),
    ("90000103", "10.5555/demo.search.3", None, "Root exudates shape <i>Bacillus</i> communities in clay soil.",
     [6, 7], [(None, "Sugars released by roots decide which <i>Bacillus</i> strains grow near them.")], True),
    ("90000104", "10.5555/demo.search.4", "PMC9000104", "Fungal networks carry water between neighbouring seedlings.",
     [8, 9, 0], [(None, "Seedlings linked by fungal threads shared water during a dry week in an invented greenhouse.")], False),
    ("90000105", "10.5555/demo.search.5", None, "Cold tolerance of moss mites across an altitude gradient.",
     [10, 11], [(None, "Mites from higher plots survived longer at minus ten degrees.")], False),
    ("90000106", "10.5555/demo.search.6", None, "Microplastic fragments in garden compost: a survey.",
     [1, 3, 5], [], False),
]

def author_xml(i):
    if i is None:
        return '<Author ValidYN="Y"><CollectiveName>Demo Soil Consortium</CollectiveName></Author>'
    last, fore, ini = PEOPLE[i]
    return (f'<Author ValidYN="Y"><LastName>{last}</LastName><ForeName>{fore}</ForeName><Initials>{ini}</Initials>'
            f'<AffiliationInfo><Affiliation>Department of Soil Studies, Demo University, Exampletown.</Affiliation>'
            f'</AffiliationInfo></Author>')

def article_xml(pmid, doi, pmcid, title, authors, abstract, eloc_only, n):
    ab = ""
    if abstract:
        ab = "<Abstract>" + "".join(
            f'<AbstractText Label="{label}" NlmCategory="{label}">{text}</AbstractText>' if label else f"<AbstractText>{text}</AbstractText>"
            for label, text in abstract) + "</Abstract>"
    ids = f'<ArticleId IdType="pubmed">{pmid}</ArticleId>'
    if not eloc_only:
        ids += f'<ArticleId IdType="doi">{doi}</ArticleId>'
    if pmcid:
        ids += f'<ArticleId IdType="pmc">{pmcid}</ArticleId>'
    return (f'<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM"><PMID Version="1">{pmid}</PMID>'
            f'<DateCompleted><Year>2021</Year><Month>06</Month><Day>0{n}</Day></DateCompleted>'
            f'<Article PubModel="Print-Electronic"><Journal><ISSN IssnType="Electronic">5555-0001</ISSN>'
            f'<JournalIssue CitedMedium="Internet"><Volume>12</Volume><Issue>3</Issue><PubDate><Year>2021</Year>'
            f'<Month>Mar</Month></PubDate></JournalIssue><Title>{JOURNAL}</Title><ISOAbbreviation>{ABBR}</ISOAbbreviation>'
            f'</Journal><ArticleTitle>{title}</ArticleTitle><Pagination><MedlinePgn>{100 + 10 * n}-{108 + 10 * n}</MedlinePgn>'
            f'</Pagination><ELocationID EIdType="doi" ValidYN="Y">{doi}</ELocationID>{ab}<AuthorList CompleteYN="Y">'
            + "".join(author_xml(i) for i in authors) +
            f'</AuthorList><Language>eng</Language><PublicationTypeList><PublicationType UI="D016428">Journal Article'
            f'</PublicationType></PublicationTypeList></Article><MedlineJournalInfo><Country>Nowhere</Country>'
            f'<MedlineTA>{ABBR}</MedlineTA><NlmUniqueID>555500001</NlmUniqueID></MedlineJournalInfo></MedlineCitation>'
            f'<PubmedData><History><PubMedPubDate PubStatus="pubmed"><Year>2021</Year><Month>3</Month><Day>{n}</Day>'
            f'</PubMedPubDate></History><PublicationStatus>ppublish</PublicationStatus><ArticleIdList>{ids}'
            f'</ArticleIdList></PubmedData></PubmedArticle>')

ESEARCH_HEAD = ('<?xml version="1.0" encoding="UTF-8" ?>\n<!DOCTYPE eSearchResult PUBLIC "-//NLM//DTD esearch 20060628//EN" '
                '"https://eutils.ncbi.nlm.nih.gov/eutils/dtd/20060628/esearch.dtd">\n')
w("pubmed_esearch.xml", ESEARCH_HEAD + "<eSearchResult>\n<Count>6</Count><RetMax>6</RetMax><RetStart>0</RetStart>\n<IdList>\n"
  + "".join(f"\t<Id>{h[0]}</Id>\n" for h in HITS) + "</IdList>\n<TranslationSet><Translation>     <From>demo studies[journal]</From>"
  "     <To>\"J Demo Stud\"[Journal]</To>    </Translation><Translation>     <From>soil microbes</From>     <To>\"soil microbiology\"[MeSH Terms] "
  "OR (\"soil\"[All Fields] AND \"microbes\"[All Fields]) OR \"soil microbes\"[All Fields]</To>    </Translation></TranslationSet>"
  "<QueryTranslation>\"J Demo Stud\"[Journal] AND (\"soil microbiology\"[MeSH Terms] OR (\"soil\"[All Fields] AND \"microbes\"[All Fields]) "
  "OR \"soil microbes\"[All Fields]) AND 2021/01/01:2021/12/31[Date - Publication]</QueryTranslation>\n\n</eSearchResult>\n")
w("pubmed_efetch.xml", '<?xml version="1.0" ?>\n<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2019//EN" '
  '"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_190101.dtd">\n<PubmedArticleSet>\n'
  + "\n".join(article_xml(*h, n) for n, h in enumerate(HITS, start=1)) + "\n</PubmedArticleSet>\n")
w("pubmed_esearch_history.xml", ESEARCH_HEAD + "<eSearchResult>\n    <Count>1</Count>\n    <RetMax>1</RetMax>\n    <RetStart>0</RetStart>\n"
  "    <QueryKey>1</QueryKey>\n    <WebEnv>MCID_5555demo0000000000000001</WebEnv>\n    <IdList>\n        <Id>90000199</Id>\n    </IdList>\n"
  "    <TranslationSet/>\n    <QueryTranslation>\"10 5555 demo history\"[All Fields]</QueryTranslation>\n</eSearchResult>\n")
w("pubmed_esearch_zero.xml", ESEARCH_HEAD + "<eSearchResult><Count>0</Count><RetMax>0</RetMax><RetStart>0</RetStart><IdList/><TranslationSet/>"
  "<QueryTranslation>(nothing matches this[All Fields])</QueryTranslation><ErrorList><PhraseNotFound>nothing matches this</PhraseNotFound>"
  "</ErrorList><WarningList><OutputMessage>No items found.</OutputMessage></WarningList></eSearchResult>\n")
w("ncbi_414.html", '<!DOCTYPE html>\n<html lang="en"><head><title>414 Request-URI Too Long</title></head>\n<body>\n'
  "<h1>Request-URI Too Long</h1>\n<p>The address of this request is longer than the server accepts.\n"
  "Send long lists of identifiers in the body of a POST instead.</p>\n<hr>\n<address>a web server written for the paperfetch demo</address>\n"
  "</body></html>\n")

# ---------------------------------------------------------------- OpenAlex
def oa_work(wid, doi, title, year, names, source, *, oa, referenced=(), pmid=None, cited_by=0, retracted=False):
    loc = {"is_oa": oa, "landing_page_url": f"https://doi.org/{doi}", "pdf_url": None, "source": {
        "id": "https://openalex.org/S5555000001", "display_name": source, "issn_l": "5555-0001", "issn": ["5555-0001"],
        "is_oa": oa, "host_organization_name": "Demo Press", "type": "journal"}, "license": "cc-by" if oa else None,
        "version": "publishedVersion" if oa else None, "is_accepted": oa, "is_published": oa}
    ids = {"openalex": f"https://openalex.org/{wid}", "doi": f"https://doi.org/{doi}"}
    if pmid:
        ids["pmid"] = f"https://pubmed.ncbi.nlm.nih.gov/{pmid}"
    return {
        "id": f"https://openalex.org/{wid}", "doi": f"https://doi.org/{doi}", "title": title, "display_name": title,
        "publication_year": year, "publication_date": f"{year}-04-01", "ids": ids, "language": "en",
        "primary_location": loc, "type": "article", "type_crossref": "journal-article", "indexed_in": ["crossref"],
        "open_access": {"is_oa": oa, "oa_status": "gold" if oa else "closed", "oa_url": f"https://doi.org/{doi}" if oa else None,
                        "any_repository_has_fulltext": False},
        "authorships": [{"author_position": "first" if i == 0 else ("last" if i == len(names) - 1 else "middle"),
                         "author": {"id": f"https://openalex.org/A55550000{i + 10}", "display_name": n, "orcid": None},
                         "institutions": [{"id": "https://openalex.org/I5555000001", "display_name": "Demo University",
                                           "country_code": "ZZ", "type": "education"}],
                         "countries": ["ZZ"], "is_corresponding": i == 0, "raw_author_name": n,
                         "raw_affiliation_strings": ["Demo University, Exampletown"]} for i, n in enumerate(names)],
        "best_oa_location": loc if oa else None, "locations": [loc], "locations_count": 1,
        "is_retracted": retracted, "is_paratext": False, "cited_by_count": cited_by,
        "biblio": {"volume": "7", "issue": "2", "first_page": "11", "last_page": "19"},
        "referenced_works": [f"https://openalex.org/{r}" for r in referenced], "referenced_works_count": len(referenced),
        "related_works": [], "counts_by_year": [{"year": 2024, "cited_by_count": cited_by}],
        "updated_date": "2026-01-05T00:00:00.000000", "created_date": "2025-01-05",
    }

def page(results, count, next_cursor):
    return {"meta": {"count": count, "db_response_time_ms": 12, "page": None, "per_page": 200, "next_cursor": next_cursor,
                     "groups_count": None}, "results": results, "group_by": []}

REFERENCED = [("W5555000201", "10.5555/demo.ref.unindexed", "An unindexed report on loam", 2019, ["Rania Haddad"], False),
              ("W5555000202", "10.5555/demo.fast2", "Another fast paper", 2022, ["Ada Quill", "Sven Lindqvist"], True)]
wj("openalex_referenced_page1.json", page([oa_work(w_, d, t, y, n, "Journal of Fast Results", oa=o) for w_, d, t, y, n, o in REFERENCED],
                                          2, "IlsyMDIyLCAnaHR0cHM6Ly9vcGVuYWxleC5vcmcvVzU1NTUwMDAyMDInXSI="))
wj("openalex_last_page.json", page([], 2, None))
CITING = [("W5555000301", "10.5555/demo.citing.1", "Snow, soil and nitrogen: a second winter", 2023),
          ("W5555000302", "10.5555/demo.citing.2", "Listening to soil animals", 2023),
          ("W5555000303", "10.5555/demo.citing.3", "Winter nitrogen budgets of invented plots", 2024),
          ("W5555000304", "10.5555/demo.citing.4", "A review of cold-soil microbiology", 2024),
          ("W5555000305", "10.5555/demo.citing.5", "Counting what lives under snow", 2025)]
wj("openalex_citing_page1.json", page([oa_work(w_, d, t, y, ["Lucas Ferreira", "Tola Adeyemi"], "Demo Letters", oa=i % 2 == 0,
                                               referenced=["W5555000101"]) for i, (w_, d, t, y) in enumerate(CITING)],
                                      5, "IlsyMDI1LCAnaHR0cHM6Ly9vcGVuYWxleC5vcmcvVzU1NTUwMDAzMDUnXSI="))
CITED = ("W5555000101", "10.5555/demo.cited", "Nitrogen budgets of snow-covered soil", 2020)
CITED_BOTH = ("W5555000102", "10.5555/demo.cited.both", "Clay, roots and the bacteria between them", 2019)
wj("openalex_work_cited.json", oa_work(*CITED, ["Ada Quill", "Tobias J. Marlow", "Ngozi Okafor"], "Demo Letters", oa=False, cited_by=5))
wj("openalex_work_cited_both.json", oa_work(*CITED_BOTH, ["Hiro Tanaka", "Eliza M. Brandt"], "Demo Letters", oa=True,
                                            referenced=[r[0] for r in REFERENCED], cited_by=0))

# ---------------------------------------------------------------- Crossref
def cr_ref(n, doi=None, upper=False):
    ref = {"key": f"e_1_2_{n}_1", "first-page": str(10 + n), "volume": str(1 + n % 30), "author": PEOPLE[n % len(PEOPLE)][0],
           "year": str(1990 + n % 30), "journal-title": ["Demo Letters", "Soil Demo Reviews", "Journal of Fast Results"][n % 3],
           "article-title": f"Invented reference number {n} on soil and snow"}
    if doi:
        ref["DOI"] = doi.upper() if upper else doi
        ref["doi-asserted-by"] = "crossref" if n % 2 else "publisher"
    else:
        ref["unstructured"] = f"{PEOPLE[n % len(PEOPLE)][0]} {PEOPLE[n % len(PEOPLE)][2]}. Unpublished field notes number {n}. Demo University; {1990 + n % 30}."
    return ref

def cr_work(doi, title, year, authors, refs):
    return {"status": "ok", "message-type": "work", "message-version": "1.0.0", "message": {
        "indexed": {"date-parts": [[2026, 1, 5]], "date-time": "2026-01-05T00:00:00Z", "timestamp": 1767571200000},
        "reference-count": len(refs), "publisher": "Demo Press", "issue": "2",
        "license": [{"start": {"date-parts": [[year, 4, 1]]}, "content-version": "vor", "delay-in-days": 0,
                     "URL": "https://creativecommons.org/licenses/by/4.0/"}],
        "content-domain": {"domain": [], "crossmark-restriction": False}, "short-container-title": ["Demo Lett"],
        "published-print": {"date-parts": [[year, 4, 1]]}, "DOI": doi, "type": "journal-article",
        "created": {"date-parts": [[year, 3, 20]]}, "page": "11-19", "source": "Crossref", "is-referenced-by-count": 5,
        "title": [title], "prefix": "10.5555", "volume": "7",
        "author": [{"given": g, "family": f, "sequence": "first" if i == 0 else "additional", "affiliation": []}
                   for i, (f, g) in enumerate(authors)],
        "member": "5555", "reference": refs, "container-title": ["Demo Letters"], "language": "en",
        "link": [{"URL": f"https://press.example/pdf/{doi.split('/', 1)[1]}.pdf", "content-type": "unspecified",
                  "content-version": "vor", "intended-application": "similarity-checking"}],
        "references-count": len(refs), "URL": f"https://doi.org/{doi}", "ISSN": ["5555-0002"],
        "issn-type": [{"value": "5555-0002", "type": "electronic"}], "published": {"date-parts": [[year, 4, 1]]}}}

refs = [cr_ref(n, f"10.5555/demo.cref.{n}", upper=n % 7 == 0) for n in range(1, 66)] + [cr_ref(n) for n in range(66, 71)]
wj("crossref_work_cited.json", cr_work(CITED[1], CITED[2], CITED[3], [("Quill", "Ada"), ("Marlow", "Tobias J."), ("Okafor", "Ngozi")], refs))
wj("crossref_work_cited_both.json", cr_work(CITED_BOTH[1], CITED_BOTH[2], CITED_BOTH[3], [("Tanaka", "Hiro"), ("Brandt", "Eliza M.")],
                                            [cr_ref(1, REFERENCED[0][1]), cr_ref(2, REFERENCED[1][1]), cr_ref(3, "10.5555/demo.cref.x"), cr_ref(4)]))

# ---------------------------------------------------------------- Europe PMC citations
cites = []
for n in range(23):
    a, b, c = PEOPLE[n % 12], PEOPLE[(n + 3) % 12], PEOPLE[(n + 7) % 12]
    cites.append({"id": str(90000401 + n), "source": "MED", "title": f"Invented study {n + 1} of winter soil in a demo valley.",
                  "authorString": f"{a[0]} {a[2]}, {b[0]} {b[2]}, {c[0]} {c[2]}.",
                  "journalAbbreviation": ["Demo Lett.", "J. Demo Stud.", "Soil Demo Rev."][n % 3], "pubYear": 2025 - n % 8,
                  "volume": str(10 + n % 9), "issue": str(1 + n % 4), "pageInfo": f"{100 + n}-{110 + n}", "citedByCount": (23 - n) // 3})
wj("europepmc_citations.json", {"version": "3.0.1", "hitCount": 23, "request": {"id": "90000301", "source": "MED", "page": 1},
                                "citationList": {"citation": cites}})
w("europepmc_citations_none.json", json.dumps({"version": "3.0.1", "hitCount": 0, "request": {"id": "90000302", "source": "MED", "page": 1},
                                               "citationList": {"citation": []}}, indent=2) + "\n")

# ---------------------------------------------------------------- JATS (Europe PMC fullTextXML)
DOCTYPE = ('<!DOCTYPE article PUBLIC "-//NLM//DTD JATS (Z39.96) Journal Archiving and Interchange DTD with MathML3 v1.2 20190208//EN" '
           '"JATS-archivearticle1-mathml3.dtd"> \n')

CORRESP = '<xref ref-type="corresp" rid="cor1"/>'


def jats(pmcid, doi, pmid, journal, abbr, title, authors, year, abstract, body, back_refs, kwds):
    contribs = "".join(
        f'<contrib contrib-type="author"><name><surname>{f}</surname><given-names>{g}</given-names></name>'
        f'<xref ref-type="aff" rid="aff1"/>{CORRESP if i == 0 else ""}</contrib>'
        for i, (f, g) in enumerate(authors))
    refs = "".join(
        f'<ref id="CR{i}"><label>{i}.</label><element-citation publication-type="journal"><person-group person-group-type="author">'
        f'<name><surname>{a}</surname><given-names>{g}</given-names></name></person-group><article-title>{t}</article-title>'
        f'<source>{s}</source><year>{y}</year><volume>{v}</volume><fpage>{p}</fpage>'
        + (f'<pub-id pub-id-type="doi">{d}</pub-id>' if d else "") + '</element-citation></ref>'
        for i, (a, g, t, s, y, v, p, d) in enumerate(back_refs, start=1))
    return (DOCTYPE +
        '<article xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:mml="http://www.w3.org/1998/Math/MathML" '
        'xmlns:ali="http://www.niso.org/schemas/ali/1.0/" article-type="research-article"><?properties open_access?>'
        f'<front><journal-meta><journal-id journal-id-type="nlm-ta">{abbr}</journal-id><journal-id journal-id-type="iso-abbrev">{abbr}</journal-id>'
        f'<journal-title-group><journal-title>{journal}</journal-title></journal-title-group><issn pub-type="epub">5555-0003</issn>'
        '<publisher><publisher-name>Demo Press &amp; Sons</publisher-name></publisher></journal-meta><article-meta>'
        f'<article-id pub-id-type="pmcid">{pmcid[3:]}</article-id><article-id pub-id-type="pmid">{pmid}</article-id>'
        f'<article-id pub-id-type="doi">{doi}</article-id><article-id pub-id-type="publisher-id">{pmcid[3:]}</article-id>'
        '<article-categories><subj-group subj-group-type="heading"><subject>Research</subject></subj-group></article-categories>'
        f'<title-group><article-title>{title}</article-title></title-group><contrib-group>{contribs}'
        '<aff id="aff1"><institution>Department of Plant Studies, Demo University</institution>, <city>Exampletown</city>, '
        '<country>Nowhere</country></aff></contrib-group><author-notes><corresp id="cor1">Corresponding author: '
        '<email>corresponding.author@demo-university.example</email></corresp></author-notes>'
        f'<pub-date pub-type="epub"><day>14</day><month>05</month><year>{year}</year></pub-date><volume>17</volume>'
        '<elocation-id>55</elocation-id><history><date date-type="received"><day>2</day><month>1</month>'
        f'<year>{year}</year></date></history><permissions><copyright-statement>© The Author(s) {year}</copyright-statement>'
        f'<copyright-year>{year}</copyright-year><license license-type="open-access">'
        '<ali:license_ref specific-use="textmining" content-type="ccbylicense">https://creativecommons.org/licenses/by/4.0/</ali:license_ref>'
        '<license-p><bold>Open Access</bold> This demo article is licensed under a Creative Commons Attribution 4.0 International '
        'License; it was written for the paperfetch demo and reports nothing real.</license-p></license></permissions>'
        f'<abstract>{abstract}</abstract><kwd-group kwd-group-type="author"><title>Keywords</title>'
        + "".join(f"<kwd>{k}</kwd>" for k in kwds) + '</kwd-group></article-meta></front>'
        f'<body>{body}</body><back><ack><title>Acknowledgements</title><p>We thank the invented greenhouse staff of Demo University.</p></ack>'
        f'<ref-list id="Bib1"><title>References</title>{refs}</ref-list></back></article>\n')

def sec(sid, title, *parts):
    return f'<sec id="{sid}"><title>{title}</title>' + "".join(parts) + "</sec>"

def p(text, pid=None):
    return f'<p id="{pid}">{text}</p>' if pid else f"<p>{text}</p>"

TABLE = ('<table-wrap id="Tab1"><label>Table 1</label><caption><p>Ratio readings of three invented stems at three water contents</p></caption>'
         '<table frame="hsides" rules="groups"><thead><tr><th>Stem</th><th>Water content (%)</th><th>Ratio</th><th>Reading time (s)</th></tr></thead>'
         '<tbody><tr><td>A</td><td>62</td><td>1.41</td><td>0.8</td></tr><tr><td>A</td><td>48</td><td>1.27</td><td>0.8</td></tr>'
         '<tr><td>B</td><td>71</td><td>1.52</td><td>0.9</td></tr><tr><td>B</td><td>55</td><td>1.33</td><td>0.9</td></tr>'
         '<tr><td>C</td><td>66</td><td>1.46</td><td>1.1</td></tr><tr><td>C</td><td>39</td><td>1.18</td><td>1.1</td></tr></tbody></table>'
         '<table-wrap-foot><fn id="Tab1fn1"><p>Readings are means of five invented measurements.</p></fn></table-wrap-foot></table-wrap>')
FIG = ('<fig id="Fig1"><label>Fig. 1</label><caption><title>The sensor on a stem</title><p>A clip holds two copper bands around the stem; '
       'the ratio is read every ten minutes.</p></caption><graphic xlink:href="demo_fig1.jpg"/></fig>')

open_body = (
    sec("Sec1", "Background",
        p('Water moves through a plant stem all day, and how much the stem holds says how thirsty the plant is <xref ref-type="bibr" rid="CR1">1</xref>. '
          'Measuring it usually means cutting the stem, which ends the experiment.', "Par1"),
        p('This demo article describes an invented clip-on sensor that reads the water content of a stem without harm '
          '<xref ref-type="bibr" rid="CR2">2</xref>, <xref ref-type="bibr" rid="CR3">3</xref>.', "Par2")),
    sec("Sec2", "Methods",
        sec("Sec3", "The sensor", p("Two copper bands, a centimetre apart, are clipped around the stem. A small radio sends a wave along "
                                     "the bands and measures how much of it comes back; the ratio of the two rises with the water the stem holds "
                                     '(Fig. <xref ref-type="fig" rid="Fig1">1</xref>).', "Par3"), FIG),
        sec("Sec4", "Plants and drying", p("Three invented shrubs grew in pots for six weeks. Watering then stopped, and each stem was read "
                                            "every ten minutes until it had lost half its water.", "Par4"),
            p("At the end each stem was cut and weighed, dried and weighed again, which gave the water content "
              "the readings were compared with.", "Par4b"))),
    sec("Sec5", "Results",
        p('The ratio followed the water content of every stem closely (Table <xref ref-type="table" rid="Tab1">1</xref>), '
          'as earlier invented studies suggested <xref ref-type="bibr" rid="CR5">5</xref>, <xref ref-type="bibr" rid="CR6">6</xref>, '
          '<xref ref-type="bibr" rid="CR7">7</xref>, <xref ref-type="bibr" rid="CR8">8</xref>. A reading took about one second.', "Par5"), TABLE,
        p("Stems that dried fastest showed the steepest fall of the ratio in the first two days.", "Par6")),
    sec("Sec6", "Discussion",
        p('The sensor is cheap and leaves the plant whole. It has only been tried on the three invented shrubs of this demo; '
          'real plants would need a calibration of their own <xref ref-type="bibr" rid="CR4">4</xref>, '
          '<xref ref-type="bibr" rid="CR9">9</xref>, <xref ref-type="bibr" rid="CR10">10</xref>, '
          '<xref ref-type="bibr" rid="CR11">11</xref>, <xref ref-type="bibr" rid="CR12">12</xref>.', "Par7")),
    sec("Sec7", "Conclusions", p("A clip-on sensor can follow the water content of a stem for weeks without harming it.", "Par8")))
open_abstract = (sec("Abs1", "Background", p("Reading the water in a plant stem usually means cutting it.")) +
                 sec("Abs2", "Results", p("An invented clip-on sensor followed the water content of three demo shrubs as they dried.")) +
                 sec("Abs3", "Conclusions", p("The ratio of a reflected radio wave tracks stem water without harm.")))
REFS = [("Quill", "A", "How stems hold water", "Demo Letters", "2015", "3", "1", "10.5555/demo.cref.1"),
        ("Marlow", "TJ", "Radio waves in wet wood", "J Demo Stud", "2017", "5", "22", "10.5555/demo.cref.2"),
        ("Okafor", "N", "Sensors that do not cut", "Soil Demo Reviews", "2018", "9", "101", None),
        ("Lindqvist", "S", "Calibrating plant sensors", "Demo Letters", "2020", "12", "7", "10.5555/demo.cref.4")]
REFS += [(PEOPLE[n % 12][0], PEOPLE[n % 12][2], f"Invented measurement number {n} of stem water", "Demo Letters",
          str(2000 + n), str(n), str(10 * n), f"10.5555/demo.cref.{n}") for n in range(5, 13)]
w("jats_PMC9000201.xml", jats("PMC9000201", "10.5555/demo.jats.sensor", "90000201", "Demo Plant Methods", "Demo Plant Methods",
                              "A clip-on sensor for the water content of plant stems", [("Haddad", "Rania"), ("Moreau", "Camille"), ("Quill", "Ada")],
                              2021, open_abstract, "".join(open_body), REFS, ["stem water", "sensor", "demo"]))

genome_body = (
    sec("S1", "Introduction", p('<italic>Demopteris exemplaris</italic> is a fern invented for the paperfetch demo. It grows, in this story, on '
                                 'shaded walls of an imaginary valley <xref ref-type="bibr" rid="CR1">1</xref>.')),
    sec("S2", "Materials and methods", p("Leaves were collected from one invented plant, and their DNA was read on an imaginary sequencer. "
                                         "The reads were assembled into one circular genome and its genes were annotated by hand.")),
    sec("S3", "Results", p("The invented chloroplast genome is 151,555 base pairs long. It holds 86 genes that code for proteins, "
                           "37 transfer RNA genes and eight ribosomal RNA genes."),
        '<fig id="F1"><label>Figure 1.</label><caption><p>A tree of <italic>Demopteris exemplaris</italic> and six other invented ferns.</p></caption>'
        '<graphic xlink:href="demo_tree.jpg"/></fig>'),
    sec("S4", "Discussion and conclusion", p('The genome places the invented fern beside its invented relatives <xref ref-type="bibr" rid="CR2">2</xref>. '
                                             'Nothing in this article describes a real organism.')))
w("jats_PMC9000202.xml", jats("PMC9000202", "10.5555/demo.jats.genome", "90000202", "Demo Genomes Part B", "Demo Genomes B",
                              "Complete chloroplast genome of the invented fern <italic>Demopteris exemplaris</italic>",
                              [("Tanaka", "Hiro"), ("Brandt", "Eliza M.")], 2021,
                              p("We report the complete chloroplast genome of an invented fern, written for the paperfetch demo."),
                              "".join(genome_body), REFS[:2], ["chloroplast genome", "fern", "demo"]))

# ---------------------------------------------------------------- PDFs with a text layer (the demo publishers' copies)
# Each a real PDF (one or two US Letter pages, Helvetica and Helvetica-Bold, WinAnsi text in a content stream, no
# compression) that pypdfium2 reads: the paper's title, its DOI, headings and a few paragraphs of invented text.
# The file name is the served PDF's stem (paperfetch/demo/world.py: demo_pdf).

PDF_PAPERS = [  # (stem, doi, title, topic)
    ("demo.fast", "10.5555/demo.fast", "A fast publisher's paper", "how quickly an invented publisher answers"),
    ("demo.fast2", "10.5555/demo.fast2", "Another fast paper", "a second look at quick answers"),
    ("demo.slow1", "10.5555/demo.slow1", "Slow but steady I", "waiting for a server that asks for a crawl delay"),
    ("demo.slow2", "10.5555/demo.slow2", "Slow but steady II", "pacing requests to a patient host"),
    ("demo.slow3", "10.5555/demo.slow3", "Slow but steady III", "the last of three papers from a slow press"),
    ("demo.limited", "10.5555/demo.limited", "Rate limits in practice", "answers of 429 and the wait they ask for"),
    ("demo.limited2", "10.5555/demo.limited2", "Rate limits, again", "a second paper behind the same rate limit"),
    ("demo.html", "10.5555/demo.html", "A landing page in disguise", "a web page served where a PDF should be"),
    ("demo.landing", "10.5555/demo.landing", "Only the landing page knows", "finding a PDF from its landing page"),
    ("demo.s2only", "10.5555/demo.s2only", "Known to Semantic Scholar alone", "a paper that one index lists"),
    ("demo.vor", "10.5555/demo.vor", "A preprint and its journal version", "the journal version of a demo preprint"),
    ("PMC9000001.1", "10.5555/demo.pmc", "A paper in PubMed Central", "an article kept in an open archive"),
    ("2101.00001v2", "10.48550/arxiv.2101.00001", "Counting invented pebbles on a demo beach", "a preprint server's copy"),
    ("2026.01.05.000001v1", "10.1101/2026.01.05.000001", "A preprint and its journal version", "the first version of a preprint"),
    ("2026.01.05.000001v2", "10.1101/2026.01.05.000001", "A preprint and its journal version", "the second version of a preprint"),
    ("2026.02.02.000002v1", "10.64898/2026.02.02.000002", "A medRxiv preprint under the new prefix", "a preprint under a new prefix"),
]
PDF_SECTIONS = [
    ("Introduction", ["This paper was written for the paperfetch demo; it reports nothing real. Its subject is {topic}, "
                      "told as a short story about invented measurements in an invented place.",
                      "Earlier demo papers looked at the same question from other sides, and none of them reached "
                      "a firm answer. Here we ask it once more, with a little more care."]),
    ("Methods", ["We made twelve invented observations on four imaginary days and wrote each one down by hand. "
                 "Every observation was checked twice before it entered the notebook."]),
    ("Results", ["Nine of the twelve observations agreed with the simplest explanation. The other three were taken "
                 "on a windy afternoon and are set aside in the discussion below.",
                 "Nothing in these results should be cited as a finding about the world."]),
    ("Discussion", ["The story of {topic} is a small one, but it gives the demo a text layer with headings and "
                    "paragraphs that a program can read back."]),
]


def pdf_string(text):
    return "(" + text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


def pdf_pages(doi, title, topic):
    """Each page's lines as (font, size, y, text); a paragraph's lines wrapped at 90 characters."""
    pages, lines, y = [], [("F2", 16, 720, title), ("F1", 9, 700, f"https://doi.org/{doi}")], 670
    for heading, paragraphs in PDF_SECTIONS:
        if y < 200:
            pages.append(lines)
            lines, y = [], 720
        lines.append(("F2", 12, y, heading))
        y -= 18
        for paragraph in paragraphs:
            for line in textwrap.wrap(paragraph.format(topic=topic), 90):
                lines.append(("F1", 10, y, line))
                y -= 13
            y -= 8
        y -= 6
    return [*pages, lines]


def pdf(doi, title, topic):
    pages = pdf_pages(doi, title, topic)
    first = 5  # 1 catalog, 2 pages, 3 and 4 the fonts; then each page and its content stream
    objects = ["<< /Type /Catalog /Pages 2 0 R >>",
               "<< /Type /Pages /Kids [" + " ".join(f"{first + 2 * i} 0 R" for i in range(len(pages)))
               + f"] /Count {len(pages)} >>",
               "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
               "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>"]
    for i, lines in enumerate(pages):
        stream = "".join(f"BT /{font} {size} Tf 72 {y} Td {pdf_string(text)} Tj ET\n" for font, size, y, text in lines)
        objects.append("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> "
                       f"/Contents {first + 2 * i + 1} 0 R >>")
        objects.append(f"<< /Length {len(stream.encode('cp1252'))} >>\nstream\n{stream}endstream")
    out, offsets = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n", []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("cp1252")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode() + b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    return out + f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()


for stem, doi, title, topic in PDF_PAPERS:
    (OUT / f"pdf_{stem}.pdf").write_bytes(pdf(doi, title, topic))
