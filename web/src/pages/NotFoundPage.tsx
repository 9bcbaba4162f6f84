import { Link } from "../components/Link"

export const NotFoundPage = ({ home }: { readonly home: string }) => (
  <section>
    <h1>Page not found</h1>
    <p class="empty">This page does not exist, or your role in this workspace does not include it.</p>
    <p><Link to={home}>Go to your start page</Link></p>
  </section>
)
