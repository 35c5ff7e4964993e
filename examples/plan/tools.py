# ruff: noqa: E501 - the tool tables keep one tool per line
"""The specialists' tools: honest demo stand-ins with real argument schemas.

Each line of a table is ``name | description | arguments``; an argument is ``name:type`` with ``?`` for optional
and ``=a/b/c`` for a choice (``list[str]=a/b/c``: some of them). A tool says what it would do with the arguments it got; nothing leaves the process.
"""

from __future__ import annotations

import inspect
import re
from typing import Any, Literal

from podium.tools import Tool

__all__ = ["TABLES", "build_tools"]

HR = """
create_employee_record | Create the HR record of an employee when onboarding someone who starts. | employee_name:str, start_date:str, role:str?
set_up_payroll | Set up payroll (salary, bank, tax) when onboarding someone who starts. | employee_name:str, salary:float?
enroll_in_benefits | Enroll in health and pension benefits when onboarding someone who starts. | employee_name:str, plan:str=standard/premium
schedule_orientation | Schedule the onboarding orientation session for a new employee who starts. | employee_name:str, date:str
assign_mentor | Assign a mentor to a new employee for their first months. | employee_name:str, mentor_name:str?
request_id_card | Request the building ID card and badge access for an employee. | employee_name:str
send_welcome_email | Send the new employee a welcome email with first-day information. | employee_name:str
add_to_directory | Add an employee to the staff directory and org chart. | employee_name:str, department:str?
process_leave_request | Process an employee's leave or vacation request. | employee_name:str, start_date:str, days:int
update_employee_details | Update an employee's personal details (address, phone, emergency contact). | employee_name:str, details:str
schedule_performance_review | Schedule an employee's performance review. | employee_name:str, date:str
start_offboarding | Start offboarding for a leaving employee: exit interview, equipment return, final pay. | employee_name:str, last_day:str
post_job_opening | Post a job opening to hire for a role, on the careers page and job boards. | title:str, department:str
schedule_interview | Schedule a job interview with a candidate when hiring. | candidate_name:str, date:str
send_offer_letter | Send an offer letter to a candidate. | candidate_name:str, salary:float?
run_background_check | Run a background check on a candidate before hiring. | candidate_name:str
register_training | Register an employee for a training course. | employee_name:str, course:str
record_overtime | Record overtime hours worked by an employee. | employee_name:str, hours:float
update_salary | Record a salary change for an employee. | employee_name:str, salary:float
issue_employment_letter | Issue an employment verification letter for an employee. | employee_name:str
handle_grievance | Open an HR case for an employee grievance or complaint. | employee_name:str, summary:str
plan_team_event | Plan a team-building event. | team:str, date:str
update_handbook | Update a section of the employee handbook. | section:str, change:str
"""

TECH = """
set_up_email_account | Create the mailbox when onboarding someone who starts. | employee_name:str
set_up_laptop | Set up a laptop with standard software when onboarding someone who starts. | employee_name:str
create_system_accounts | Create accounts in the internal systems (single sign-on, chat, file shares) for an employee. | employee_name:str
set_up_vpn_access | Set up VPN access so an employee can work remotely. | employee_name:str
reset_password | Reset a user's password. | user_name:str
unlock_account | Unlock a user account locked after failed logins. | user_name:str
enable_mobile_roaming | Enable international roaming on a mobile phone line. | phone_number:str?, start_date:str?
check_mobile_plan | Check a mobile phone plan's allowances and roaming charges. | phone_number:str?
order_sim_card | Order a replacement SIM card for a mobile phone line. | phone_number:str?
configure_mobile_device | Configure a mobile phone with work email and security settings. | user_name:str
install_software | Install a software package on a user's computer. | software:str, user_name:str
grant_file_access | Grant a user access to a shared folder or drive. | user_name:str, folder:str
set_up_printer | Set up a printer for a user or an office. | location:str
troubleshoot_network | Troubleshoot a network or Wi-Fi connection problem. | location:str, symptom:str
fix_email_issue | Fix a problem sending or receiving email. | user_name:str, symptom:str
set_up_video_conferencing | Set up video conferencing for a meeting room. | room:str
backup_data | Back up a user's data before a device change. | user_name:str
restore_data | Restore a user's data from backup. | user_name:str
remove_system_access | Remove a leaving employee's access to every system. | employee_name:str
report_security_incident | Open a security incident (phishing, malware, lost device). | summary:str
update_operating_system | Update the operating system on a device. | device:str
replace_broken_device | Replace a broken laptop, phone or monitor. | user_name:str, device:str
set_up_multi_factor_auth | Set up multi-factor authentication for a user. | user_name:str
"""

PROCUREMENT = """
order_laptop | Order a laptop for an employee or new starter. | employee_name:str?, model:str=standard/developer/executive
order_monitor | Order a monitor (display screen) for an employee or new starter. | employee_name:str?, count:int?
order_peripherals | Order a keyboard, mouse and headset for an employee. | items:list[str]=keyboard/mouse/headset, employee_name:str?
order_mobile_phone | Order a mobile phone for an employee. | employee_name:str?
order_office_furniture | Order a desk and chair for an employee's workstation. | employee_name:str?, items:str?
order_office_supplies | Order office supplies (paper, pens, notebooks). | items:str, quantity:int?
order_docking_station | Order a docking station for a laptop. | employee_name:str?
check_inventory | Check the stock of an item in the inventory. | item:str
create_purchase_order | Create a purchase order for goods or services. | item:str, quantity:int, supplier:str?
track_order | Track the delivery status of an order. | order_number:str
approve_purchase_request | Approve a purchase request within the budget. | request_number:str
request_quote | Request a price quote from suppliers. | item:str, quantity:int
compare_suppliers | Compare suppliers on price, delivery time and quality. | item:str
register_supplier | Register a new supplier after checks. | supplier:str
renew_software_license | Renew a software license or subscription. | software:str, seats:int
purchase_software_license | Buy licenses for a software product. | software:str, seats:int
return_equipment | Arrange the return of faulty or unused equipment to a supplier. | item:str, reason:str
process_invoice | Process a supplier invoice for payment. | invoice_number:str, amount:float
check_budget | Check the remaining procurement budget of a department. | department:str
book_business_travel | Book flights and a hotel for business travel. | traveller:str, destination:str, date:str
order_catering | Order catering for a meeting or event. | date:str, people:int
manage_vendor_contract | Review the terms of a vendor agreement before renewal. | supplier:str
"""

PRODUCT = """
get_product_info | Get the product information of a new product: features, specifications, pricing. | product:str
get_product_specifications | Get a product's technical specifications. | product:str
check_product_availability | Check whether a product is available and in stock. | product:str
compare_products | Compare two products feature by feature. | product:str, other:str
get_product_roadmap | Get the product roadmap and upcoming releases. | product:str
add_product_feature | Add a feature request to the product backlog. | product:str, feature:str
update_product_pricing | Update a product's price. | product:str, price:float
launch_product | Plan a new product launch: date, channels and readiness checklist. | product:str, date:str
write_release_notes | Write the release notes for a product version. | product:str, version:str
collect_customer_feedback | Collect customer feedback on a product. | product:str
analyze_product_usage | Analyze how customers use a product. | product:str
set_product_discount | Set a time-limited discount on a product. | product:str, percent:float
check_warranty | Check a product's warranty terms. | product:str
get_mobile_plans | List the available mobile phone plans and their roaming options. | region:str?
add_mobile_plan_addon | Add an add-on (roaming, data) to a customer's mobile plan. | addon:str=roaming/data/calls, start_date:str?
recall_product | Start a product recall for a batch with a defect. | product:str, batch:str
discontinue_product | Plan the end of life of a product. | product:str, date:str
update_product_page | Update the product page on the website. | product:str, change:str
create_product_bundle | Create a bundle of products at a combined price. | products:list[str], price:float
forecast_product_demand | Forecast demand for a product. | product:str, months:int
run_product_survey | Run a survey about a product with customers. | product:str, question:str
"""

MARKETING = """
write_press_release | Write a press release announcing a product or news. | topic:str
create_marketing_campaign | Create a marketing campaign for a product. | product:str, budget:float?
post_on_social_media | Post an announcement on our social media accounts. | message:str, channel:str=all/linkedin/x/instagram
schedule_social_posts | Schedule a series of social media posts. | topic:str, start_date:str
write_blog_post | Write a blog post on a topic. | topic:str
send_newsletter | Send the email newsletter to subscribers. | subject:str
design_promotional_material | Design flyers, banners and other promotional material. | topic:str
analyze_campaign_performance | Analyze a marketing campaign's performance. | campaign:str
conduct_market_research | Conduct market research on a market or competitor. | topic:str
plan_event | Plan a marketing event or webinar. | topic:str, date:str
manage_influencers | Contact influencers to promote a product. | product:str
update_brand_guidelines | Update the brand guidelines. | change:str
create_product_video | Produce a short video presenting a product. | product:str
run_ad_campaign | Run a paid advertising campaign online. | product:str, budget:float
write_product_description | Write marketing copy describing a product for the website. | product:str
prepare_media_kit | Prepare a media kit for journalists (facts, images, contacts). | topic:str
arrange_press_interview | Arrange an interview with the press. | topic:str, date:str
track_brand_mentions | Track mentions of the brand in the media. | period:str
run_customer_survey | Run a customer satisfaction survey. | topic:str
create_case_study | Write a customer case study. | customer:str
update_website_content | Update content on the marketing website. | page:str, change:str
translate_marketing_copy | Translate marketing copy into another language. | text:str, language:str
"""

LEGAL = """
review_contract | Review a contract and point out risky clauses. | contract:str
draft_employment_contract | Draft the employment contract for a new employee. | employee_name:str, role:str?
draft_nda | Draft a non-disclosure agreement with a party. | party:str
check_compliance | Check compliance of a process with regulations (GDPR, labour law). | topic:str
register_trademark | Register a trademark for a product or brand name. | name:str
file_patent | File a patent application for an invention. | title:str
review_press_release | Review a press release for legal risks before publication. | topic:str
review_marketing_claims | Check marketing claims can be substantiated. | claims:str
handle_data_request | Handle a personal data access or deletion request. | person:str, request:str=access/deletion
draft_terms_of_service | Draft or update terms of service. | product:str
review_privacy_policy | Review the privacy policy. | change:str?
manage_litigation | Track a lawsuit and its deadlines. | case:str
approve_vendor_contract | Approve a supplier contract after legal review. | supplier:str
draft_settlement | Draft a settlement agreement. | party:str
check_export_controls | Check export control rules for shipping a product. | product:str, country:str
review_employee_policy | Review an HR policy for legal compliance. | policy:str
submit_regulatory_filing | Submit a regulatory filing. | filing:str, date:str
draft_partnership_agreement | Draft a partnership agreement. | partner:str
review_licensing_terms | Review open-source or software license terms. | software:str
prepare_legal_hold | Place documents on legal hold. | matter:str
"""

GENERIC = """
search_knowledge_base | Search the internal knowledge base for information. | query:str
summarize_document | Summarize a document. | document:str
create_task | Create a task in the task tracker. | title:str, assignee:str?
schedule_meeting | Schedule a meeting with people. | topic:str, date:str
send_message | Send a message to a person or team. | recipient:str, text:str
write_report | Write a short report on a topic. | topic:str
translate_text | Translate a text into another language. | text:str, language:str
set_reminder | Set a reminder. | text:str, date:str
book_meeting_room | Book a meeting room. | date:str, people:int
answer_question | Answer a general question. | question:str
take_notes | Take notes of a discussion. | topic:str
create_checklist | Create a checklist for a piece of work. | topic:str
find_document | Find a document in the shared drives. | title:str
create_presentation | Create a slide presentation on a topic. | topic:str
plan_project | Break a project into milestones with dates. | project:str, deadline:str?
order_lunch | Order lunch for a person. | person:str, preference:str?
look_up_contact | Look up a colleague's contact details. | person:str
calculate | Do a calculation. | expression:str
convert_currency | Convert an amount between currencies. | amount:float, currency_from:str, currency_to:str
get_weather | Get the weather forecast for a place. | place:str, date:str?
file_expense | File an expense claim with its receipt. | amount:float, reason:str
"""

TABLES: dict[str, str] = {
    "HrAgent": HR,
    "TechSupportAgent": TECH,
    "ProcurementAgent": PROCUREMENT,
    "ProductAgent": PRODUCT,
    "MarketingAgent": MARKETING,
    "LegalAgent": LEGAL,
    "GenericAgent": GENERIC,
}
"""Each specialist's tools, by specialist."""

_TYPES: dict[str, Any] = {"str": str, "int": int, "float": float, "list[str]": list[str]}


def _parameter(text: str) -> inspect.Parameter:
    name, _, kind = text.strip().partition(":")
    optional = kind.endswith("?")
    kind = kind.rstrip("?")
    kind, _, choices = kind.partition("=")
    annotation: Any = Literal[tuple(choices.split("/"))] if choices else _TYPES[kind]  # type: ignore[misc]
    default = choices.split("/")[0] if choices else (None if optional else inspect.Parameter.empty)
    if choices and kind.startswith("list["):  # some of the choices: which ones is for the caller to say
        annotation, default = list[annotation], (None if optional else inspect.Parameter.empty)
    if optional and not choices:
        annotation = annotation | None
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)


def _stand_in(name: str, description: str, parameters: list[inspect.Parameter]) -> Tool:
    what = description[0].lower() + description[1:].rstrip(".")
    listed = re.search(r"\b(?:a|an) (\w+(?:, \w+)* (?:and|or) \w+)\b", what)  # "a keyboard, mouse and headset"

    def run(**kwargs: Any) -> str:
        said = what
        for value in kwargs.values():  # some of the things it lists: says those ("would order a headset")
            if listed and isinstance(value, list) and value and all(str(v) in listed.group(1) for v in value):
                things = [str(v) for v in value]
                some = things[0] if len(things) == 1 else f"{', '.join(things[:-1])} and {things[-1]}"
                said = f"{what[: listed.start()]}{'an' if some[0] in 'aeiou' else 'a'} {some}{what[listed.end() :]}"
        shown = {k: ", ".join(map(str, v)) if isinstance(v, list) else v for k, v in kwargs.items()}
        given = ", ".join(f"{k}={v}" for k, v in shown.items() if v is not None)
        return f"[demo stand-in, nothing was changed] Would {said} ({given})."

    run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in parameters}
    run.__name__ = name
    return Tool(run, name=name, description=description)


def build_tools(table: str) -> list[Tool]:
    """The tools of one table."""
    tools = []
    for line in table.strip().splitlines():
        name, description, arguments = (part.strip() for part in line.split("|"))
        parameters = [_parameter(a) for a in arguments.split(",") if a.strip()]
        tools.append(_stand_in(name, description, parameters))
    return tools
